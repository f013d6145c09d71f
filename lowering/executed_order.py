"""The order a loop tree really executes, as isl maps, and the fallback for
an isl AST that does not follow its schedule.

The schedule tree says in which order statement instances run; the loop
tree that isl's AST generator produces from it is what runs. They should
agree, but isl's AST generator does not always follow a sequence inside a
band: a band mapping `S5[] -> [T]` and `S0[t] -> [2 + t]` (t even) with the
sequence S0, S5 ran S5 before S0(T - 2) (fuzz finding F10; reproduced with
islpy alone). So the loop tree itself is checked, never only the schedule:

    order = executed_order(tree, ctx, context)   # node -> { S3[t] -> [position, c0, ...] }

`executed_order` reads the loop tree back as a map from each statement
instance to its execution time (one dimension per list position on the path
to the statement and one per enclosing loop's iterator), with the loop
bounds, strides and `if` conditions as constraints. Comparing such times
lexicographically is comparing when instances run. `GraphSchedule` checks
that every needed instance runs exactly once and that every dependence runs
source first in this order, and storage plans are verified against it.

`lift_zero_dim(schedule, graph)` rewrites the schedule so that every
0-dimensional statement `S5[]` becomes `S5[u]` with `u = 0`: isl treats it
like the loop statements around it and its AST follows the sequence (the
tree's `Exec` of such a statement then has one argument, `0`, that
`drop_lifted_args` removes).
"""
from __future__ import annotations

import islpy as isl

from .loop_ast import Exec, For, If
from .polyhedral import coalesced

__all__ = ["executed_order", "lift_zero_dim", "drop_lifted_args"]


class Exprs:
    """Loop-tree expressions as isl piecewise affine functions on the space
    `[params] -> { [iterators] }`."""

    def __init__(self, ctx: isl.Context, context: isl.Set, iterators: list[str]):
        params = context.get_space()
        names = [params.get_dim_name(isl.dim_type.param, i) for i in range(params.dim(isl.dim_type.param))]
        self.universe = isl.Set.read_from_str(ctx, f"[{', '.join(names)}] -> {{ [{', '.join(iterators)}] }}")
        self.ls = isl.LocalSpace.from_space(self.universe.get_space())
        self.vars = {name: (isl.dim_type.set, i) for i, name in enumerate(iterators)}
        for i, name in enumerate(names):
            self.vars.setdefault(name, (isl.dim_type.param, i))
        self.ctx = ctx

    def const(self, value: int) -> isl.PwAff:
        return isl.PwAff.from_aff(isl.Aff.zero_on_domain(self.ls).set_constant_val(isl.Val.int_from_si(self.ctx, value)))

    def aff(self, e: tuple) -> isl.PwAff:
        op = e[0]
        if op == "int":
            return self.const(e[1])
        if op == "var":
            if e[1] not in self.vars:
                raise ValueError(f"unknown name {e[1]} in the loop tree")
            kind, pos = self.vars[e[1]]
            return isl.PwAff.from_aff(isl.Aff.var_on_domain(self.ls, kind, pos))
        if op == "neg":
            return self.aff(e[1]).neg()
        if op == "select":
            return self.cond(e[1]).indicator_function().cond(self.aff(e[2]), self.aff(e[3]))
        a, b = self.aff(e[1]), self.aff(e[2])
        if op == "add":
            return a.add(b)
        if op == "sub":
            return a.sub(b)
        if op == "mul":
            return a.mul(b)
        if op in ("floordiv", "mod"):
            if e[2][0] != "int" or e[2][1] <= 0:
                raise ValueError(f"division by a non-constant in the loop tree: {e}")
            if op == "mod":
                return a.mod_val(isl.Val.int_from_si(self.ctx, e[2][1]))
            return a.div(b).floor()
        if op == "min":
            return a.min(b)
        if op == "max":
            return a.max(b)
        raise ValueError(f"unsupported expression {op} in the loop tree")

    def cond(self, e: tuple) -> isl.Set:
        op = e[0]
        if op == "and":
            return self.cond(e[1]).intersect(self.cond(e[2]))
        if op == "or":
            return self.cond(e[1]).union(self.cond(e[2]))
        if op == "not":
            return self.universe.subtract(self.cond(e[1]))
        compare = {"eq": "eq_set", "ne": "ne_set", "lt": "lt_set", "le": "le_set",
                   "gt": "gt_set", "ge": "ge_set"}
        if op not in compare:
            raise ValueError(f"unsupported condition {op} in the loop tree")
        return getattr(self.aff(e[1]), compare[op])(self.aff(e[2]))


def tree_iterators(tree: list, out: list[str]) -> list[str]:
    """The loop variables of `tree`, outermost first, appended to `out`."""
    for s in tree:
        if isinstance(s, For):
            if s.var not in out:
                out.append(s.var)
            tree_iterators(s.body, out)
        elif isinstance(s, If):
            tree_iterators(s.then, out)
            tree_iterators(s.orelse, out)
    return out


def _depth(tree: list) -> int:
    """Time dimensions the deepest statement of `tree` needs."""
    deepest = 1
    for s in tree:
        if isinstance(s, For):
            deepest = max(deepest, 2 + _depth(s.body))
        elif isinstance(s, If):
            deepest = max(deepest, 1 + _depth(s.then), 1 + _depth(s.orelse))
    return deepest


def as_map(exprs: Exprs, values: list, where: isl.Set, name: str | None) -> isl.Map:
    """`where -> name[values]` as an isl map."""
    target = isl.Set.universe(isl.Space.set_alloc(exprs.ctx, 0, 0))
    result = isl.Map.from_domain_and_range(exprs.universe, target)
    for v in values:
        result = result.flat_range_product(isl.Map.from_pw_aff(v))
    if name is not None:
        result = result.set_tuple_name(isl.dim_type.out, name)
    return result.intersect_domain(where)


def executed_order(tree: list, ctx: isl.Context, context: isl.Set) -> dict[int, isl.Map]:
    """Node index -> map from its instances (`S<k>[...]`) to the times the
    loop tree executes them, for the bounds in `context` (the parameter set
    the AST was generated for); all times have the same number of dimensions."""
    exprs = Exprs(ctx, context, tree_iterators(tree, []))
    width = _depth(tree)
    out: dict[int, isl.Map] = {}

    def visit(stmts: list, where: isl.Set, time: list) -> None:
        for i, s in enumerate(stmts):
            at = time + [exprs.const(i)]
            if isinstance(s, For):
                var = exprs.aff(("var", s.var))
                lower = exprs.aff(s.lower)
                inside = lower.le_set(var).intersect(var.lt_set(exprs.aff(s.upper)))
                if s.step != 1:
                    inside = inside.intersect(var.sub(lower).mod_val(isl.Val.int_from_si(ctx, s.step))
                                              .eq_set(exprs.const(0)))
                visit(s.body, where.intersect(inside), at + [var])
            elif isinstance(s, If):
                holds = coalesced(exprs.cond(s.cond))
                visit(s.then, where.intersect(holds), at)
                visit(s.orelse, coalesced(where.subtract(holds)), at)
            else:
                padded = at + [exprs.const(0)] * (width - len(at))
                instance = as_map(exprs, [exprs.aff(a) for a in s.args], where, f"S{s.node}")
                m = instance.reverse().apply_range(as_map(exprs, padded, where, None))
                out[s.node] = out[s.node].union(m) if s.node in out else m

    visit(tree, exprs.universe.intersect_params(context), [])
    return {k: coalesced(m) for k, m in out.items()}


def lift_zero_dim(schedule: isl.Schedule) -> isl.Schedule | None:
    """`schedule` with every 0-dimensional statement `S<k>[]` replaced by
    `S<k>[0]` (None if there is none)."""
    sets = schedule.get_domain().get_set_list()
    dims = {sets.get_at(i).get_tuple_name(): sets.get_at(i).dim(isl.dim_type.set) for i in range(sets.n_set())}
    if 0 not in dims.values():
        return None
    space = schedule.get_domain().get_space()
    params = [space.get_dim_name(isl.dim_type.param, i) for i in range(space.dim(isl.dim_type.param))]
    pieces = []
    for name, n in dims.items():
        steps = ", ".join(f"i{j}" for j in range(n))
        pieces.append(f"{name}[u] -> {name}[] : u = 0" if n == 0 else f"{name}[{steps}] -> {name}[{steps}]")
    pull = isl.UnionPwMultiAff.read_from_str(schedule.get_ctx(), f"[{', '.join(params)}] -> {{ {'; '.join(pieces)} }}")
    return schedule.pullback_union_pw_multi_aff(pull)


def drop_lifted_args(tree: list, graph) -> list:
    """The tree with the argument of each lifted statement's `Exec` removed."""
    for s in tree:
        if isinstance(s, For):
            drop_lifted_args(s.body, graph)
        elif isinstance(s, If):
            drop_lifted_args(s.then, graph)
            drop_lifted_args(s.orelse, graph)
        elif isinstance(s, Exec) and not graph.nodes[s.node].domain:
            s.args = []
    return tree
