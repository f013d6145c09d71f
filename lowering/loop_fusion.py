"""Fusing a consumer loop into its producer's loop, a constant number of steps behind.

isl's scheduler (whole-component mode) clusters statements by a heuristic
that depends on statement order and sizes: a learner that could run n - 1
steps behind the acting (n-step returns, TEMPO section 7.4) may come out as
a loop of its own after the acting loop. That is correct, but every value
the learner reads from the acting is then kept for the whole episode, where
n of them would do. Two graphs that differ by one constant (B = 8 or 16)
got the two schedules.

`fuse_shifted_loops` is a post-pass on isl's schedule tree that makes the
result not depend on that luck. Inside a sequence, a loop (band) B that
reads values of an earlier loop A over the same dim is merged into A's
band, shifted by the least constant s that runs every value B reads from A
before B reads it:

    for c1 in range(T):                       for c1 in range(T + s):
      A[t = c1]                                 if c1 < T: A[t = c1]
    X                                   ->      if c1 >= s: B[t = c1 - s]
    for c1 in range(T):                       X
      B[t = c1]

(the statements X between the two loops that do not depend on A go before
the fused loop, the others after it). The shift is the largest distance,
in loop iterations, of a dependence from A to B; it must be a constant (a
Monte-Carlo return read at `t` is computed at the end of the episode, at a
distance that grows with T: no fusion). Only loops whose band members are
one and the same dim with coefficient 1 in every statement (plus
constants) are fused, and the result is kept only if every dependence
between the moved statements still runs source first (the whole schedule
is checked again by `GraphSchedule.check`).

The schedule tree is read into a small Python tree (bands, sequences,
leaves; nested sequences flattened), rewritten, and built back with isl's
schedule constructors; a tree with another kind of node is left alone, and
so is a tree where nothing fuses (the same isl object comes back).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from tidal.symbolic import evaluate, parse

from .dependence_check import first_violated

__all__ = ["fuse_shifted_loops"]

_T = isl.schedule_node_type


@dataclass
class _Leaf:
    pass


@dataclass
class _Band:
    partial: isl.MultiUnionPwAff
    permutable: bool
    coincident: list
    child: object


@dataclass
class _Seq:
    children: list   # [(filter UnionSet, subtree)]


class _Unsupported(Exception):
    pass


def _read(node: isl.ScheduleNode):
    kind = node.get_type()
    if kind == _T.leaf:
        return _Leaf()
    if kind == _T.band:
        return _Band(node.band_get_partial_schedule(), bool(node.band_get_permutable()),
                     [bool(node.band_member_get_coincident(i)) for i in range(node.band_n_member())],
                     _read(node.child(0)))
    if kind == _T.sequence:
        children = []
        for i in range(node.n_children()):
            f = node.child(i)
            filt, sub = f.filter_get_filter(), _read(f.child(0))
            if isinstance(sub, _Seq):   # a sequence in a sequence: its children, in place
                children += [(filt.intersect(g), s) for g, s in sub.children]
            else:
                children.append((filt, sub))
        return _Seq(children)
    raise _Unsupported(str(kind))


def _build(tree, domain: isl.UnionSet) -> isl.Schedule:
    if isinstance(tree, _Leaf):
        return isl.Schedule.from_domain(domain)
    if isinstance(tree, _Seq):
        out = None
        for filt, sub in tree.children:
            part = domain.intersect(filt)
            if part.is_empty():
                continue
            piece = _build(sub, part)
            out = piece if out is None else out.sequence(piece)
        return out if out is not None else isl.Schedule.from_domain(domain)
    sched = _build(tree.child, domain).insert_partial_schedule(tree.partial.intersect_domain(domain))
    band = sched.get_root().child(0)
    band = band.band_set_permutable(1 if tree.permutable else 0)
    for i, c in enumerate(tree.coincident):
        band = band.band_member_set_coincident(i, 1 if c else 0)
    return band.get_schedule()


def _statements(filt: isl.UnionSet) -> set[int]:
    sets = filt.get_set_list()
    return {int(sets.get_at(i).get_tuple_name()[1:]) for i in range(sets.n_set())}


def _loop_dim(band: _Band) -> str | None:
    """The one domain dim every statement's first band member runs along
    (coefficient 1, plus constants and bounds), or None."""
    dims = set()
    affs = band.partial.get_at(0).get_pw_aff_list()
    for j in range(affs.n_pw_aff()):
        for _, aff in affs.get_at(j).get_pieces():
            if aff.dim(isl.dim_type.div):
                return None
            for d in range(aff.dim(isl.dim_type.in_)):
                c = aff.get_coefficient_val(isl.dim_type.in_, d)
                if c.is_zero():
                    continue
                if not c.is_one():
                    return None
                dims.add(aff.get_dim_name(isl.dim_type.in_, d))
    return dims.pop() if len(dims) == 1 else None


def _bound_values(params: list[str], derived: dict[str, str], value: int) -> dict[str, int]:
    """Every bound at `value`, and each derived bound (sdg-tile's tile count
    N = (T + 63) floordiv 64) at what its expression gives then: fixing N at
    `value` too would contradict the domains' `T <= 64 N <= T + 63`."""
    values = {name: value for name in params if name not in derived}
    for name in params:
        if name in derived:
            values[name] = int(evaluate(parse(derived[name]), values))
    return values


def _shift(a: _Band, b: _Band, deps: list, params: list[str], derived: dict[str, str] | None = None) -> int | None:
    """The least s such that every dependence from A to B runs in an earlier
    or the same iteration of the fused loop, if it is one constant (the same
    with the bounds at 64 and at 1000), else None."""
    pa = isl.UnionMap.from_multi_union_pw_aff(a.partial)
    pb = isl.UnionMap.from_multi_union_pw_aff(b.partial)
    worst = {}
    for value in (64, 1000):
        values = _bound_values(params, derived or {}, value)
        s = None
        for m in deps:
            pairs = isl.UnionMap.from_map(m).apply_domain(pa).apply_range(pb)   # {[a] -> [b]}
            gaps = pairs.deltas()
            if gaps.is_empty():
                continue
            gap = isl.Set.from_union_set(gaps).project_out(isl.dim_type.set, 1, a.partial.dim(isl.dim_type.out) - 1)
            for k, name in enumerate(gap.get_var_names(isl.dim_type.param)):
                if name in values:
                    gap = gap.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(gap.get_ctx(), values[name]))
            least = gap.lexmin()
            if least.is_empty():
                continue
            if not least.is_singleton():
                return None
            point = least.sample_point()
            need = -point.get_coordinate_val(isl.dim_type.set, 0).to_python()
            s = need if s is None else max(s, need)
        worst[value] = s
    if worst[64] is None or worst[64] != worst[1000]:
        return None
    return max(worst[64], 0)


def _shifted(band: _Band, s: int) -> isl.MultiUnionPwAff:
    n = band.partial.dim(isl.dim_type.out)
    xs = ", ".join(f"x{k}" for k in range(n))
    ys = ", ".join([f"x0 + {s}"] + [f"x{k}" for k in range(1, n)])
    shift = isl.UnionMap(f"{{ [{xs}] -> [{ys}] }}", context=band.partial.get_ctx())
    return isl.MultiUnionPwAff.from_union_map(isl.UnionMap.from_multi_union_pw_aff(band.partial).apply_range(shift))


class _Fuser:
    def __init__(self, schedule: isl.Schedule, graph, domains: dict, validity: list):
        self.schedule, self.graph, self.domains, self.validity = schedule, graph, domains, validity
        self.source = {(sink, number): graph.nodes[sink].edges[number].source for sink, number, _ in validity}
        self.params = list(graph.bounds)
        self.root_domain = schedule.get_domain()
        self.tree = None
        self.fused = 0
        self.refused: set = set()   # (A's statements, B's statements, shift) whose fusion failed the check

    def run(self) -> isl.Schedule:
        root = self.schedule.get_root()
        if root.n_children() != 1:
            return self.schedule
        try:
            self.tree = _read(root.child(0))
        except _Unsupported:
            return self.schedule
        self._visit(self.tree)
        return self.schedule if not self.fused else _build(self.tree, self.root_domain)

    def _deps(self, sources: set[int], sinks: set[int]) -> list:
        return [m for sink, number, m in self.validity
                if sink in sinks and self.source[(sink, number)] in sources]

    def _visit(self, tree) -> None:
        if isinstance(tree, _Band):
            self._visit(tree.child)
        elif isinstance(tree, _Seq):
            for _, sub in tree.children:
                self._visit(sub)
            while self._fuse_one(tree):
                pass

    def _fuse_one(self, seq: _Seq) -> bool:
        kids = seq.children
        dims = [_loop_dim(t) if isinstance(t, _Band) else None for _, t in kids]
        for b in range(len(kids)):
            if dims[b] is None:
                continue
            (fb, tb), sb = kids[b], _statements(kids[b][0])
            for a in range(b - 1, -1, -1):
                fa, ta = kids[a]
                if dims[a] != dims[b] or len(ta.coincident) != len(tb.coincident):
                    continue
                sa = _statements(fa)
                deps = self._deps(sa, sb)
                s = _shift(ta, tb, deps, self.params, self.graph.derived) if deps else None
                key = (frozenset(sa), frozenset(sb), s)
                if s is None or key in self.refused:
                    continue
                if self._try(seq, a, b, s):
                    return True
                self.refused.add(key)
        return False

    def _try(self, seq: _Seq, a: int, b: int, s: int) -> bool:
        kids = seq.children
        (fa, ta), (fb, tb) = kids[a], kids[b]
        after_a, before, after = _statements(fa), [], []
        for filt, sub in kids[a + 1:b]:   # between the loops: before the fused loop unless it needs A
            mine = _statements(filt)
            if self._deps(after_a, mine):
                after.append((filt, sub))
                after_a |= mine
            else:
                before.append((filt, sub))
        fused = _Band(ta.partial.union_add(_shifted(tb, s)), ta.permutable and tb.permutable,
                      [x and y for x, y in zip(ta.coincident, tb.coincident)],
                      _Seq([(fa, ta.child), (fb, tb.child)]))
        old = list(kids)
        seq.children = kids[:a] + before + [(fa.union(fb), fused)] + after + kids[b + 1:]
        moved = set().union(*(_statements(f) for f, _ in old[a:b + 1]))
        theta = _build(self.tree, self.root_domain).get_map()
        checked = [(sink, number, m) for sink, number, m in self.validity
                   if sink in moved or self.source[(sink, number)] in moved]
        if first_violated(self.graph, self.domains, checked, theta) is not None:
            seq.children = old
            return False
        self.fused += 1
        return True


def fuse_shifted_loops(schedule: isl.Schedule, graph, domains: dict, validity: list) -> isl.Schedule:
    """`schedule` with every loop that reads an earlier loop of the same
    sequence at a constant distance fused into it (module docstring); the
    same object when nothing fuses."""
    return _Fuser(schedule, graph, domains, validity).run()
