"""The polyhedral view of an SDG: statements, dependence relations, valid domains.

Every node of the graph is an isl statement `S<k>` whose instances are the
points of its domain, with the bounds as parameters (`[T] -> { S3[t] : 0 <= t < T }`;
a node with domain `[]` is the 0-dimensional statement `{ S1[] }`). Each operand
is an isl map from sink instances to the source instances they read; for
`sdg.merge` branch `b` the sink side is restricted to the points where `b` is
the *first* branch whose condition holds (`t ge 1`, `t mod 5 eq 0`, ...).

`valid_domains` computes which points of each node can be computed at all: a
point is valid if everything it reads is inside its producer's domain and
valid itself (for a merge: the first branch that holds reads only valid
points). It is the greatest fixpoint of that rule, found with a worklist;
when the worklist keeps shrinking a node (a recurrence whose chain of reads
leaves the domain one step further at each round, e.g. `s[t] = f(s[t + 1])`),
it is found in one step with isl's transitive closure of the reads. Valid
domains are parametric: `[T] -> { S1[] : T >= 2 }` is an op that can be
computed only when `T >= 2` (it reads `x[1]`). Invalid points are never
executed; if an output or a UDF (which must run at every point of its
domain) has one for some bounds, those bounds are an error (see
`schedule.py`). The reference interpreter is demand-driven and never asks
for an invalid point from a valid one, so executing exactly the valid points
agrees with it.

Steps and bounds appear in isl text under their `isl_name` (a name isl
reserves, such as `floor`, gets a trailing underscore).

A dependence or condition isl cannot represent (`t * t`, `t * T`) raises
`UnsupportedDependenceError`, a `GraphError` at the op.

islpy reports exceptions raised in callbacks only as warnings; this module
uses no callbacks and checks every result it relies on.
"""
from __future__ import annotations

import islpy as isl

from tidal.symbolic import And, Not, SymbolicError, parse
from tidal.symbolic.isl_bridge import dependence_map, domain_set, isl_name

from .graph import Graph, GraphError, Node, components
from .valid_elimination import invalid_by_elimination

__all__ = ["Polyhedral", "coalesced", "statement_name", "NotConverged", "UnsupportedDependenceError", "BOX"]

# Dependence distances beyond this are "unbounded" (they grow with a bound).
BOX = 1 << 20
# isl operations the transitive closure of the valid-domain fallback may take.
CLOSURE_OPERATIONS = 2_000_000


def coalesced(obj):
    """`obj.coalesce()`, or `obj` itself when isl's coalescing fails (it is a
    simplification: isl 0.27 reported "original tableau does not correspond
    to original basic map" on a dependence of a fuzz program, F5)."""
    try:
        return obj.coalesce()
    except isl.Error:
        return obj


def statement_name(index: int) -> str:
    return f"S{index}"


class NotConverged(Exception):
    """The valid-domain fixpoint keeps shrinking (a chain with no base case)."""

    def __init__(self, nodes: list[int]):
        super().__init__(f"valid domains of nodes {nodes} do not converge")
        self.nodes = nodes


class UnsupportedDependenceError(GraphError):
    """A dependence or condition of `op` that the scheduler cannot represent
    in isl (not affine: `t * t`, `t * T`, ...)."""


# One isl context for the process: islpy never frees a context that has held
# objects, so a context per compile leaked ~6 KB per schedule (300 KB per
# compile of a small program with gradients). Options that a compile sets on it
# (schedule_configure) are set again by every compile before use.
_SHARED_CONTEXT = isl.Context()


class Polyhedral:
    """isl sets and maps of one graph, in one isl context.

    `fixed` maps bound names to integers to work with concrete bounds
    (used to find a witness point for error messages).
    """

    def __init__(self, graph: Graph, ctx: isl.Context | None = None, fixed: dict | None = None):
        self.graph = graph
        self.ctx = ctx or _SHARED_CONTEXT
        names = graph.steps + graph.bounds
        for a, b in ((a, b) for a in names for b in names if a != b):
            if isl_name(a) == isl_name(b) or isl_name(a) == b:
                raise GraphError(f"sdg.graph @{graph.name}: the dimension names '{a}' and '{b}' are the same "
                                 f"name in isl ('{isl_name(a)}'); rename one", graph.op)
        bounds = [isl_name(b) for b in graph.bounds]
        self.params = isl.Set.read_from_str(self.ctx, f"[{', '.join(bounds)}] -> {{ : }}").get_space()
        self.context = self._set(f"[{', '.join(bounds)}] -> {{ : {' and '.join(f'{b} >= 1' for b in bounds) or '0 = 0'} }}")
        for name, text in graph.derived.items():   # a tile count: N = (T + 63) // 64
            tie = domain_set([], parse(f"{name} == ({text})"), ctx=self.ctx)
            self.context = self.context.intersect_params(tie.params().align_params(self.params))
        self.fixed = dict(fixed or {})
        self.full: dict[int, isl.Set] = {}
        self.regions: dict[int, list[isl.Set]] = {}   # merge: first-true region of each branch
        self.reads: dict[int, list[isl.Map]] = {}     # sink instance -> source instances read
        for node in graph.nodes:
            self._add_node(node)

    # -- construction ----------------------------------------------------------------
    def _fix(self, obj):
        return self.fix(obj, self.fixed)

    def fix(self, obj, values: dict):
        """`obj` (a set or map of this context) with its parameters aligned
        and the bounds named in `values` (bound name -> int) fixed."""
        obj = obj.align_params(self.params)
        for name, value in values.items():
            pos = obj.find_dim_by_name(isl.dim_type.param, isl_name(name))
            if pos >= 0:
                obj = obj.fix_val(isl.dim_type.param, pos, isl.Val.read_from_str(self.ctx, str(int(value))))
        return obj

    def _set(self, text: str) -> isl.Set:
        return isl.Set.read_from_str(self.ctx, text).align_params(self.params)

    def _add_node(self, node: Node) -> None:
        dims = self.graph.dims_of(node)
        name = statement_name(node.index)
        what = f"'{node.name}' condition <{node.attrs.get('cond')}>"
        try:
            cond = parse(node.attrs["cond"], dims=self.graph.dims) if "cond" in node.attrs else True
            full = self._fix(domain_set(dims, cond, ctx=self.ctx).set_tuple_name(name)).intersect_params(
                self._fix(self.context))
            self.full[node.index] = full
            regions, reads, earlier = [], [], []
            for edge in node.edges:
                what = f"'{node.name}' branch {edge.number} condition <{edge.cond_text}>"
                cond = And(edge.cond, *[Not(c) for c in earlier]) if node.name == "sdg.merge" else edge.cond
                if node.name == "sdg.merge":
                    earlier.append(edge.cond)
                    region = self._fix(domain_set(dims, cond, ctx=self.ctx).set_tuple_name(name)).intersect(full)
                    regions.append(region)
                what = f"'{node.name}' operand {edge.number} (%{edge.source}{edge.dep_text})"
                source_dims = self.graph.dims_of(edge.source)
                m = dependence_map(dims, edge.dep, source_dims, cond, restrict_source=False, ctx=self.ctx)
                m = m.set_tuple_name(isl.dim_type.in_, name)
                m = m.set_tuple_name(isl.dim_type.out, statement_name(edge.source))
                reads.append(self._fix(m).intersect_domain(full))
        except SymbolicError as e:
            raise UnsupportedDependenceError(f"{what} cannot be scheduled: {str(e).splitlines()[0]}",
                                             node.op) from None
        self.regions[node.index] = regions
        self.reads[node.index] = reads

    # -- valid domains -----------------------------------------------------------------
    def _valid_of(self, node: Node, valid: dict) -> isl.Set:
        k = node.index
        if node.name == "sdg.merge":
            result = self.full[k].subtract(self.full[k])  # empty, same space
            for edge, region, read in zip(node.edges, self.regions[k], self.reads[k]):
                bad = read.intersect_range(valid[edge.source].complement()).domain()
                result = result.union(region.subtract(bad))
            return result.coalesce()
        result = self.full[k]
        for edge, read in zip(node.edges, self.reads[k]):
            result = result.subtract(read.intersect_range(valid[edge.source].complement()).domain())
        return result.coalesce()

    def valid_domains(self, max_updates: int = 6) -> dict[int, isl.Set]:
        """The greatest fixpoint of "a point is valid if all it reads is valid".
        A worklist over the whole graph first; when some node shrinks more than
        `max_updates` times, the graph is solved one strongly connected
        component at a time, producers first: a worklist in the component, then
        the fixpoint from the transitive closure of the component's own reads
        (`closure_valid_domains`). Raises NotConverged when neither works."""
        try:
            return self._worklist(self.graph.nodes, {}, max_updates)
        except NotConverged:
            pass
        valid: dict[int, isl.Set] = {}
        for component in components(self.graph):
            nodes = [self.graph.nodes[k] for k in component]
            try:
                valid.update(self._worklist(nodes, valid, max_updates))
            except NotConverged:
                solved = self.closure_valid_domains(nodes, valid)
                if solved is None:
                    raise
                valid.update(solved)
        return valid

    def _worklist(self, nodes: list, known: dict, max_updates: int) -> dict[int, isl.Set]:
        """Valid domains of `nodes`, given those of the nodes they read outside
        the list (`known`)."""
        valid = dict(known)
        valid.update({n.index: self.full[n.index] for n in nodes})
        mine = {n.index for n in nodes}
        consumers: dict[int, set[int]] = {k: set() for k in mine}
        for n in nodes:
            for e in n.edges:
                if e.source in mine:
                    consumers[e.source].add(n.index)
        by_index = {n.index: n for n in nodes}
        pending = [n.index for n in nodes if n.edges]
        queued = set(pending)
        updates = dict.fromkeys(mine, 0)
        while pending:
            k = pending.pop(0)
            queued.discard(k)
            new = self._valid_of(by_index[k], valid)
            if new.is_equal(valid[k]):
                continue
            valid[k] = new
            updates[k] += 1
            if updates[k] > max_updates:
                raise NotConverged(sorted(i for i, u in updates.items() if u >= max_updates))
            for c in sorted(consumers[k]):
                if c not in queued:
                    pending.append(c)
                    queued.add(c)
        return {k: valid[k] for k in mine}

    def closure_valid_domains(self, nodes: list, known: dict) -> dict[int, isl.Set] | None:
        """The greatest fixpoint for `nodes` (a component) in one step: a point
        is invalid iff a chain of reads inside the component (through the first
        branch that holds, at merges) reaches a point that fails by itself: one
        that reads outside its producer's domain or an invalid point of a node
        outside the component (`known`), or a merge point where no branch
        holds. Tried with isl's transitive closure of all the reads (exact
        only), then by eliminating the statements one at a time
        (valid_elimination.py); a result counts only if it is a fixpoint of the
        rule (never an approximation). None if neither gives one."""
        mine = {n.index for n in nodes}
        local: dict[int, isl.Set] = {}            # points that fail by themselves
        reads: dict[tuple[int, int], isl.Map] = {}  # (sink, source) -> read, inside the source's domain
        for node in nodes:
            k = node.index
            fails = self.full[k].subtract(self.full[k])
            if node.name == "sdg.merge":
                covered = fails
                for region in self.regions[k]:
                    covered = covered.union(region)
                fails = self.full[k].subtract(covered)
            for edge, read in zip(node.edges, self.reads[k]):
                source = self.full[edge.source] if edge.source in mine else known[edge.source]
                fails = fails.union(read.intersect_range(source.complement()).domain())
                if edge.source in mine:
                    inside = read.intersect_range(source)
                    key = (k, edge.source)
                    reads[key] = inside if key not in reads else reads[key].union(inside)
            local[k] = fails.coalesce()
        for solve in (self._invalid_by_closure, self._invalid_by_elimination):
            invalid = self._bounded(lambda: solve(nodes, local, reads))
            if invalid is None:
                continue
            valid = dict(known)
            valid.update({k: self.full[k].subtract(invalid[k]).coalesce() for k in mine})
            if all(not node.edges or self._valid_of(node, valid).is_equal(valid[node.index])
                   for node in nodes):
                return {k: valid[k] for k in mine}
        return None

    def _bounded(self, solve):
        """solve() with isl's operations bounded (a fallback: give up rather than hang)."""
        before = self.ctx.get_max_operations()
        self.ctx.reset_operations()
        self.ctx.set_max_operations(CLOSURE_OPERATIONS)
        try:
            return solve()
        except isl.Error:
            return None
        finally:
            self.ctx.set_max_operations(before)
            self.ctx.reset_operations()

    def _invalid_by_closure(self, nodes: list, local: dict, reads: dict) -> dict[int, isl.Set] | None:
        invalid = None
        for fails in local.values():
            fails = isl.UnionSet.from_set(fails)
            invalid = fails if invalid is None else invalid.union(fails)
        if reads:
            union = None
            for m in reads.values():
                m = isl.UnionMap.from_map(m)
                union = m if union is None else union.union(m)
            closure, exact = union.transitive_closure()
            if not exact:
                return None
            invalid = invalid.union(closure.intersect_range(invalid).domain())
        return {n.index: invalid.extract_set(self.full[n.index].get_space()) for n in nodes}

    def _invalid_by_elimination(self, nodes: list, local: dict, reads: dict) -> dict[int, isl.Set]:
        return invalid_by_elimination([n.index for n in nodes], self.full, local, reads)

    # -- dependences --------------------------------------------------------------------
    def validity(self, valid: dict) -> list[tuple[int, int, isl.Map]]:
        """`(sink, operand, map source instance -> sink instance)` for every
        operand, restricted to valid sink points (and, for merges, to the
        branch's first-true region)."""
        out = []
        for node in self.graph.nodes:
            k = node.index
            for number, (edge, read) in enumerate(zip(node.edges, self.reads[k])):
                sink = valid[k]
                if node.name == "sdg.merge":
                    sink = sink.intersect(self.regions[k][number])
                m = read.intersect_domain(sink).intersect_range(valid[edge.source]).reverse()
                out.append((k, number, coalesced(m)))
        return out

    def embedding(self, index: int) -> isl.Map:
        """`{ S<k>[own steps] -> [all graph steps, absent ones 0] }`."""
        steps = self.graph.steps
        own = self.graph.nodes[index].domain
        target = ", ".join(isl_name(s) if s in own else "0" for s in steps)
        return isl.Map.read_from_str(
            self.ctx, f"{{ {statement_name(index)}[{', '.join(isl_name(s) for s in own)}] -> [{target}] }}")

    def is_bounded(self, source: int, sink: int, m: isl.Map) -> bool:
        """Whether the dependence distance of `m` (source -> sink instances)
        stays within a constant, every graph dim compared (a dim absent from
        one side counts as 0): only such edges go into proximity."""
        if m.is_empty():
            return True
        if not self.graph.steps:
            return True
        full = m.apply_domain(self.embedding(source)).apply_range(self.embedding(sink))
        deltas = full.deltas()
        box = " and ".join(f"-{BOX} <= d{i} <= {BOX}" for i in range(len(self.graph.steps)))
        names = ", ".join(f"d{i}" for i in range(len(self.graph.steps)))
        params = ", ".join(isl_name(b) for b in self.graph.bounds)
        box_set = self._set(f"[{params}] -> {{ [{names}] : {box} }}")
        return bool(deltas.is_subset(self._fix(box_set)))
