"""sdg-accumulate: a reduction over all of a temporal dim of a value computed
per step becomes a running reduction carried along the step (the inverse of
lifting, TEMPO section 7.4's incremental learning).

A sum over t of a per-step value (the gradient of a weight summed over an
episode's steps) reads the value as one block `x[i, 0:T]`: every point of
it is kept until the last one exists, T copies of the per-step value. When
that block is large (the gradient of a weight over a large input, T x in x
out), the same sum can be carried instead: a recurrence over t adds each
point as it comes, and only the running value (and the last point) lives.
The readers read its last point. For a program whose per-step values can
be computed a bounded number of steps behind (n-step returns), this is what
lets the learner run along the episode, n steps behind the acting, with
O(1) memory per weight instead of O(T).

The pass rewrites an `sdg.reduce` (sum, prod, max or min) whose `dims` are
`[0]` and whose operand is read as `x[..., 0:D, ...]`, the whole range of a
step d of x's domain (its only slice; x's per-point shape does not vary with
d; the reduce is not over d), when that block has at least `min-bytes` bytes
with every bound at `assume-bound` (the default leaves ordinary programs
alone: a running sum is a loop-carried value that a batched program would
not need). Booleans (any / all) and arg-reductions are left alone.

Before (x over [i, t], per point [64, 4]):

    %s = sdg.reduce sum [0] %x[i, 0:T] domain [i] : (!tidal.tensor<[T, 64, 4], f32>) -> !tidal.tensor<[64, 4], f32>
    %w = sdg.binary sub %w0[i], %s[i] domain [i] : ...

After `sdg-accumulate{min-bytes=0}`:

    %acc = sdg.merge %x[i, 0] if <t eq 0>, %n[i, t] if <true> domain [i, t] : (...) -> !tidal.tensor<[64, 4], f32>
    %n = sdg.binary add %acc[i, t - 1], %x[i, t] domain [i, t] : (...) -> !tidal.tensor<[64, 4], f32>
    %w = sdg.binary sub %w0[i], %acc[i, T - 1] domain [i] : ...

(max and min carry with `sdg.binary max`/`min`, prod with `mul`.) The running
value's store holds two points; the schedule runs the recurrence as soon as
each x[i, t] exists. A bf16 sum or product carries in f32 (each point cast to
f32, the readers reading the last running value cast back to bf16), as every
bf16 reduction accumulates (runtime/kernels.py): in bf16, 256 + 1 is 256.

Options: `min-bytes` (rewrite only blocks of at least this many bytes),
`assume-bound` (the value of every bound when sizes are estimated).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects import enums, ops_named
from tidal.dialects.attrs import expr_attr, index_attr, tensor_element_type, tensor_shape, tensor_type
from tidal.symbolic import SymbolicError, parse

from .base import ModulePass, option
from .sdg_build import kind_name, mentions, value_bytes
from .sdg_graph_view import View
from .transform_utils import dep_of, read_type, set_dep

__all__ = ["SdgAccumulate"]

CARRY = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


def _is_whole(component: str, bound: str) -> bool:
    lo, _, hi = component.partition(":")
    if component.count(":") != 1:
        return False
    try:
        return parse(lo).same(parse("0")) and parse(hi).same(parse(bound))
    except SymbolicError:
        return False


def _candidate(g: View, k: int, min_bytes: int, assume: int) -> tuple[int, str] | None:
    """(position of the step d in x's domain, d) when reduce k can carry, else None."""
    o = g.ops[k]
    if o.name != "sdg.reduce" or kind_name(o) not in CARRY or len(o.operands) != 1:
        return None
    if list(ir.DenseI64ArrayAttr(o.attributes["dims"])) != [0]:
        return None
    src, dep = g.reads[k][0]
    if src is None or len(dep) != len(g.domain[src]) or sum(":" in c for c in dep) != 1:
        return None
    pos = next(j for j, c in enumerate(dep) if ":" in c)
    step = g.domain[src][pos]
    bound = g.bounds[g.steps.index(step)]
    if not _is_whole(dep[pos], bound) or step in g.domain[k]:
        return None
    if any(mentions(c, step) for j, c in enumerate(dep) if j != pos):
        return None
    if any(mentions(s, step) for s in tensor_shape(o.operands[0].type)):
        return None   # a per-step shape that varies with the step has no running value
    if tensor_element_type(o.results[0].type) == "i1":
        return None
    block = read_type(o.operands[0], tuple(dep))
    if value_bytes(block, assume) < max(1, min_bytes):
        return None
    return pos, step


def _rewrite(g: View, k: int, pos: int, step: str) -> None:
    o = g.ops[k]
    ctx = o.context
    bound = g.bounds[g.steps.index(step)]
    src_dep = g.reads[k][0][1]
    x = o.operands[0]
    domain = [s for s in g.steps if s in g.domain[k] or s == step]
    at = domain.index(step)
    point = [c if j != pos else step for j, c in enumerate(src_dep)]
    first = [c if j != pos else "0" for j, c in enumerate(src_dep)]
    previous = [s if s != step else f"{step} - 1" for s in domain]
    rtype = o.results[0].type
    wide = tensor_element_type(rtype) == "bf16" and kind_name(o) in ("sum", "prod")
    ctype = tensor_type(tensor_shape(rtype), "f32", ctx) if wide else rtype
    i32 = ir.IntegerType.get_signless(32, ctx)
    kind = ir.IntegerAttr.get(i32, int(getattr(enums.BinaryKind, CARRY[kind_name(o)])))
    with ctx, o.location, ir.InsertionPoint(o):
        if wide:   # the points in f32, over the running value's domain
            x = ir.Operation.create("sdg.cast", results=[ctype], operands=[x],
                                    attributes={"domain": index_attr(domain),
                                                "deps": ir.ArrayAttr.get([index_attr(point)])}).results[0]
            point, first = domain, [s if s != step else "0" for s in domain]
        # the merge reads the add, which reads the merge: the add reads x in its place until the merge exists
        add = ir.Operation.create("sdg.binary", results=[ctype], operands=[x, x],
                                  attributes={"kind": kind, "domain": index_attr(domain),
                                              "deps": ir.ArrayAttr.get([index_attr(previous), index_attr(point)])})
        acc = ir.Operation.create(
            "sdg.merge", results=[ctype], operands=[x, add.results[0]],
            attributes={"deps": ir.ArrayAttr.get([index_attr(first), index_attr(domain)]),
                        "conds": ir.ArrayAttr.get([expr_attr(f"{step} eq 0"), expr_attr("true")]),
                        "domain": index_attr(domain)})
    add.operands[0] = acc.results[0]
    acc.move_before(add)
    if wide:   # the readers read the last running value in bf16, where they read the reduce
        last = [s if s != step else f"{bound} - 1" for s in domain]
        with ctx, o.location, ir.InsertionPoint(o):
            back = ir.Operation.create("sdg.cast", results=[rtype], operands=[acc.results[0]],
                                       attributes={"domain": index_attr(list(g.domain[k])),
                                                   "deps": ir.ArrayAttr.get([index_attr(last)])})
        o.results[0].replace_all_uses_with(back.results[0])
        o.erase()
        return
    for use in list(o.results[0].uses):
        reader, i = use.owner, use.operand_number
        comps = dep_of(reader, i)
        reader.operands[i] = acc.results[0]
        set_dep(reader, i, comps[:at] + [f"{bound} - 1"] + comps[at:])
    o.erase()


@dataclass
class SdgAccumulate(ModulePass):
    """Carries large reductions over a whole step as running reductions (see the module doc)."""

    name: ClassVar[str] = "sdg-accumulate"
    summary: ClassVar[str] = ("A large reduction over all points of a step of a per-step value becomes a "
                              "running reduction along the step (O(1) points kept, not the whole block)")
    min_bytes: int = option(1 << 28, "carry only reductions whose block has at least this many bytes")
    assume_bound: int = option(1024, "the value of every bound when sizes are estimated")

    def run(self, op: ir.Operation) -> None:
        self.num_carried = 0
        for graph in ops_named(op, "sdg.graph"):
            while True:
                g = View(graph)
                found = next(((k, c) for k in range(len(g.ops))
                              if (c := _candidate(g, k, self.min_bytes, self.assume_bound)) is not None), None)
                if found is None:
                    break
                k, (pos, step) = found
                _rewrite(g, k, pos, step)
                self.num_carried += 1
