"""Scheduling an SDG with isl (the paper's §5.1).

    sched = schedule_graph(read_graph(graph_op))
    sched.text()          # the isl schedule tree, as a string (kept as an attribute)
    sched.ast()           # the isl AST that scans it (see loop_ast.py)

One statement per node (its valid domain, bounds as parameters), one validity
relation per operand (source instance before sink instance; slices are
ranges; merge branches restricted to where they apply), and proximity
relations for the operands whose dependence distance stays bounded (`t - 1`,
windows, `x[0] if t eq 0`): an unbounded one (a once-per-episode update
reading `0:T`, a parameter read at every step) would dominate isl's objective
and push everything to the end, so it is validity only.

isl runs in whole-component mode (`schedule_whole_component`), which fuses
producers and consumers at any constant distance and stays fast on large
graphs; band members are marked `separate` so a steady-state loop carries no
prologue/epilogue guards. Both are options.

Unschedulable programs raise `ScheduleError`, whose `diagnostics` name the
operators (with their MLIR locations) and the dependence expressions at fault.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from tidal.symbolic.isl_bridge import points

from .graph import Graph
from .polyhedral import NotConverged, Polyhedral, statement_name

__all__ = ["ScheduleOptions", "GraphSchedule", "ScheduleError", "schedule_graph", "load_schedule"]


class ScheduleError(ValueError):
    """The graph cannot be scheduled. `diagnostics` is a list of
    `(node index or None, message)`; str() is the whole report."""

    def __init__(self, summary: str, diagnostics: list[tuple[int | None, str]]):
        self.summary = summary
        self.diagnostics = diagnostics
        super().__init__("\n".join([summary] + ["  " + m for _, m in diagnostics]))


@dataclass
class ScheduleOptions:
    whole_component: bool = True   # isl's whole-component scheduling
    proximity: bool = True         # add proximity relations (needed for any fusion)
    separate: bool = True          # split prologue/epilogue out of steady-state loops
    max_updates: int = 6           # valid-domain fixpoint: shrinks allowed per node


@dataclass
class GraphSchedule:
    graph: Graph
    poly: Polyhedral
    domains: dict[int, isl.Set]                 # valid domain of each node
    validity: list[tuple[int, int, isl.Map]]    # (sink, operand, source -> sink)
    proximity: list[tuple[int, int, isl.Map]]
    schedule: isl.Schedule
    options: ScheduleOptions = field(default_factory=ScheduleOptions)

    def text(self) -> str:
        return str(self.schedule)

    def schedule_map(self) -> isl.UnionMap:
        """Statement instance -> execution time (lexicographic order)."""
        return self.schedule.get_map()

    def ast(self) -> isl.AstNode:
        build = isl.AstBuild.from_context(self.poly.context)
        return build.node_from_schedule(self.schedule)

    def statements(self) -> list[int]:
        return sorted(k for k, d in self.domains.items() if not d.is_empty())

    def check(self) -> None:
        """Every validity pair runs source first (isl results are re-checked)."""
        theta = self.schedule_map()
        before = theta.lex_lt_union_map(theta)
        for sink, number, m in self.validity:
            if not isl.UnionMap.from_map(m).is_subset(before):
                node = self.graph.nodes[sink]
                raise ScheduleError(f"internal error: the schedule of @{self.graph.name} violates a dependence",
                                    [(sink, f"{node.describe()} operand {number} "
                                            f"({node.edges[number].dep_text})")])


def _union(maps) -> isl.UnionMap:
    result = None
    for m in maps:
        um = isl.UnionMap.from_map(m)
        result = um if result is None else result.union(um)
    return result


def _configure(ctx: isl.Context, options: ScheduleOptions) -> None:
    ctx.set_schedule_whole_component(1 if options.whole_component else 0)


def _separate(schedule: isl.Schedule) -> isl.Schedule:
    """Marks every band member `separate`. islpy turns an exception in the
    callback into a warning, so failures are collected and the result checked."""
    failures = []

    def mark(node):
        try:
            if node.get_type() == isl.schedule_node_type.band:
                for i in range(node.band_n_member()):
                    node = node.band_member_set_ast_loop_type(i, isl.ast_loop_type.separate)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)
        return node
    result = schedule.get_root().map_descendant_bottom_up(mark).get_schedule()
    if failures or not result.get_map().is_equal(schedule.get_map()):
        raise RuntimeError(f"marking the schedule's bands 'separate' failed: {failures[:1]}")
    return result


def _derive(graph: Graph, options: ScheduleOptions, ctx: isl.Context | None = None):
    poly = Polyhedral(graph, ctx)
    try:
        domains = poly.valid_domains(options.max_updates)
    except NotConverged as e:
        raise _invalid_points_error(graph, e.nodes) from None
    _check_required(graph, poly, domains)
    validity = [v for v in poly.validity(domains) if not v[2].is_empty()]
    return poly, domains, validity


def schedule_graph(graph: Graph, options: ScheduleOptions | None = None) -> GraphSchedule:
    """Computes the schedule of `graph`; raises ScheduleError if there is none."""
    options = options or ScheduleOptions()
    poly, domains, validity = _derive(graph, options)
    _configure(poly.ctx, options)
    live = [k for k in sorted(domains) if not domains[k].is_empty()]
    if not live:
        schedule = isl.Schedule.from_domain(isl.UnionSet.empty(poly.context.get_space()))
    else:
        dom = isl.UnionSet.from_set(domains[live[0]])
        for k in live[1:]:
            dom = dom.add_set(domains[k])
        proximity = ([v for v in validity if poly.is_bounded(graph.nodes[v[0]].edges[v[1]].source, v[0], v[2])]
                     if options.proximity else [])
        sc = isl.ScheduleConstraints.on_domain(dom).set_context(poly.context)
        if validity:
            sc = sc.set_validity(_union(m for _, _, m in validity))
        if proximity:
            sc = sc.set_proximity(_union(m for _, _, m in proximity))
        try:
            schedule = sc.compute_schedule()
        except isl.Error as e:
            raise _cycle_error(graph, validity, str(e)) from None
        if schedule is None:
            raise _cycle_error(graph, validity, "isl found no schedule")
        if options.separate:
            schedule = _separate(schedule)
    result = GraphSchedule(graph, poly, domains, validity,
                           proximity if live else [], schedule, options)
    result.check()
    return result


def load_schedule(graph: Graph, text: str) -> GraphSchedule:
    """A GraphSchedule from a schedule tree saved with `text()`."""
    options = ScheduleOptions()
    poly, domains, validity = _derive(graph, options)
    try:
        schedule = isl.Schedule.read_from_str(poly.ctx, text)
    except isl.Error as e:
        raise ScheduleError(f"invalid schedule attribute for @{graph.name}: {e}", []) from None
    result = GraphSchedule(graph, poly, domains, validity, [], schedule, options)
    expected = isl.UnionSet.empty(poly.context.get_space())
    for k in result.statements():
        expected = expected.add_set(domains[k])
    if not schedule.get_domain().is_equal(expected):
        raise ScheduleError(f"the schedule attribute of @{graph.name} does not match its operators "
                            f"(re-run sdg-schedule)", [])
    result.check()
    return result


# -- diagnostics ------------------------------------------------------------------------------
_REQUIRED = ("sdg.output", "sdg.udf")


def _check_required(graph: Graph, poly: Polyhedral, domains: dict) -> None:
    """Outputs and UDFs run at every point of their domain: all must be valid."""
    for node in graph.nodes:
        if node.name in _REQUIRED and not poly.full[node.index].is_subset(domains[node.index]):
            raise _invalid_points_error(graph, [node.index])


def _point_text(graph: Graph, node_index: int, p: tuple) -> str:
    names = graph.nodes[node_index].domain
    return ", ".join(f"{n} = {v}" for n, v in zip(names, p)) or "its only point"


def _trace(graph: Graph, poly: Polyhedral, valid: dict, k: int, p: tuple) -> list[tuple[int, str]]:
    """Why point `p` of node `k` cannot be computed, one line per step."""
    lines, seen = [], set()
    while True:
        node = graph.nodes[k]
        where = f"{node.describe()} at {_point_text(graph, k, p)}"
        point = isl.Set.read_from_str(poly.ctx, f"{{ {statement_name(k)}[{', '.join(map(str, p))}] }}")
        point = point.align_params(poly.params)
        edges = list(range(len(node.edges)))
        if node.name == "sdg.merge":
            taken = [b for b in edges if not point.intersect(poly.regions[k][b]).is_empty()]
            if not taken:
                conds = ", ".join(f"<{e.cond_text}>" for e in node.edges)
                lines.append((k, f"{where}: no branch condition holds ({conds})"))
                return lines
            edges = taken[:1]
        for b in edges:
            edge = node.edges[b]
            src = graph.nodes[edge.source]
            read = poly.reads[k][b].intersect_domain(point).range()
            branch = f"branch {b} (if <{edge.cond_text}>) " if node.name == "sdg.merge" else ""
            outside = read.subtract(poly.full[edge.source])
            if not outside.is_empty():
                q = points(outside.lexmin())[0]
                dom = ", ".join(f"0 <= {d.step.name} < {d.bound.name}" for d in graph.dims_of(src)) or "a single point"
                lines.append((k, f"{where}: {branch}reads %{edge.source}{edge.dep_text}, which includes "
                                 f"{_point_text(graph, edge.source, q)} outside the domain of "
                                 f"{src.describe()} ({dom})"))
                return lines
            bad = read.subtract(valid[edge.source])
            if not bad.is_empty():
                q = points(bad.lexmin())[0]
                if (k, b) not in seen:
                    lines.append((k, f"{where}: {branch}reads %{edge.source}{edge.dep_text}, "
                                     f"which needs {src.describe()} at {_point_text(graph, edge.source, q)}"))
                seen.add((k, b))
                k, p = edge.source, q
                break
        else:
            lines.append((k, f"{where}: cannot be computed"))
            return lines


def _invalid_points_error(graph: Graph, nodes: list[int]) -> ScheduleError:
    """Finds a concrete bound value and a point that cannot be computed and
    explains the chain of reads that leads outside a domain."""
    required = [n.index for n in graph.nodes if n.name in _REQUIRED] + list(nodes)
    for value in (2, 3, 4, 6, 8, 12):
        fixed = {b: value for b in graph.bounds}
        poly = Polyhedral(graph, fixed=fixed)
        valid = poly.valid_domains(max_updates=10 ** 6)
        for k in required:
            bad = poly.full[k].subtract(valid[k])
            if bad.is_empty():
                continue
            p = points(bad.lexmin())[0]
            lines = _trace(graph, poly, valid, k, p)
            node = graph.nodes[k]
            bounds = ", ".join(f"{b} = {value}" for b in graph.bounds)
            looping = len({d[0] for d in lines}) < len(lines) or any(
                "which needs" in m for _, m in lines[1:])
            if looping and len(lines) > 1:
                lines.append((None, "the dependences above form a chain that never reaches a base case "
                                    "(a recurrence must read points its definition by cases provides)"))
            return ScheduleError(f"cannot schedule @{graph.name}: {node.describe()} needs values that can "
                                 f"never be computed (e.g. with {bounds}):", lines)
    names = ", ".join(graph.nodes[k].describe() for k in nodes)
    return ScheduleError(f"cannot schedule @{graph.name}: the computable points of {names} do not converge", 
                         [(k, graph.nodes[k].describe()) for k in nodes])


def _cycle_error(graph: Graph, validity, isl_message: str) -> ScheduleError:
    """The validity relation has a cycle: name the operators and dependences on it."""
    involved: set[int] = set()
    if validity:
        union = _union(m for _, _, m in validity)
        closure, _exact = union.transitive_closure()
        cycles = closure.intersect(closure.domain().identity())
        maps = cycles.get_map_list()
        for i in range(maps.n_map()):
            involved.add(int(maps.get_at(i).get_tuple_name(isl.dim_type.in_)[1:]))
    diagnostics = []
    for sink, number, m in validity:
        edge = graph.nodes[sink].edges[number]
        if sink in involved and edge.source in involved:
            node = graph.nodes[sink]
            branch = f" (branch if <{edge.cond_text}>)" if node.name == "sdg.merge" else ""
            diagnostics.append((sink, f"{node.describe()} reads %{edge.source}{edge.dep_text}{branch} "
                                      f"from {graph.nodes[edge.source].describe()}"))
    if not diagnostics:
        diagnostics = [(None, isl_message)]
    diagnostics.append((None, "hint: every recurrence needs its reads to point strictly to earlier (or "
                              "strictly to later) points; change one read on this cycle (e.g. [t + 1] to "
                              "[t - 1]) or compute the value outside the cycle"))
    return ScheduleError(f"cannot schedule @{graph.name}: its dependences form a cycle in which an operator "
                         f"instance must run before itself", diagnostics)
