"""Scheduling an SDG with isl (the paper's §5.1).

    sched = schedule_graph(read_graph(graph_op))
    sched.text()          # the isl schedule tree, as a string (kept as an attribute)
    sched.loop_tree()     # the loops that run it, checked (loop_ast.py, executed_order.py)

One statement per node (the points of its domain that are valid and needed,
see needed.py; bounds as parameters), one validity relation per operand
(source instance before sink instance; slices are ranges; merge branches
restricted to where they apply), and proximity
relations for the operands whose dependence distance stays bounded (`t - 1`,
windows, `x[0] if t eq 0`): an unbounded one (a once-per-episode update
reading `0:T`, a parameter read at every step) would dominate isl's objective
and push everything to the end, so it is validity only.

isl runs in whole-component mode (`schedule_whole_component`), which fuses
producers and consumers at any constant distance and stays fast on large
graphs; band members are marked `separate` so a steady-state loop carries no
prologue/epilogue guards, when its body is small (`separate_max_ops`).
All are options.

Unschedulable programs raise `ScheduleError`, whose `diagnostics` name the
operators (with their MLIR locations) and the dependence expressions at fault
(the errors and their messages: schedule_diagnostics.py).

Outputs and UDFs must run at every point of their domain. Valid domains are
parametric in the bounds, so an output may be computable for some bounds
only: `y = x[0] + x[1]` reads `x` at `t = 1`, which exists when `T >= 2`.
Such a program is scheduled for the bounds where it can run: the schedule
keeps one `Requirement` per such output or UDF (the isl set of bounds where
all its points can be computed) and `GraphSchedule.check_bounds(bounds)`,
called before a run, raises `UncomputableError` naming the op whose read
leaves a domain, its location and the bound (`needs input "x" at t = 1 but
T = 1`). Only a program that cannot run for any bounds with every bound at
least 2 is refused here (a `ScheduleError` with a witness such as `T = 2`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import islpy as isl

from tidal.symbolic import Slice

from .dependence_check import first_violated, first_violated_pairwise
from .executed_order import drop_lifted_args, executed_order, lift_zero_dim
from .graph import Graph, op_weight
from .loop_ast import from_isl
from .loop_fusion import fuse_shifted_loops
from .loop_peel import peel_equality_guards
from .needed import needed_domains
from .stopping import check_stop_order, graph_stops, stop_phase, stop_slice_error
from .polyhedral import NotConverged, Polyhedral, statement_name
from .schedule_diagnostics import (Requirement, ScheduleError, UncomputableError, cycle_error, find_requirements,
                                   invalid_points_error, uncomputable_error, union_maps)

__all__ = ["ScheduleOptions", "GraphSchedule", "ScheduleError", "Requirement", "UncomputableError",
           "schedule_graph", "load_schedule"]


@dataclass
class ScheduleOptions:
    whole_component: bool = True   # isl's whole-component scheduling
    proximity: bool = True         # add proximity relations (needed for any fusion)
    separate: bool = True          # split prologue/epilogue out of steady-state loops...
    separate_max_ops: int = 64     # ...whose bodies run at most this many ops (see _separate)
    fuse_shifted: bool = True      # fuse a loop into its producer's, a constant shift behind (loop_fusion.py)
    max_updates: int = 6           # valid-domain fixpoint: shrinks allowed per node


def options_for(graph: Graph) -> ScheduleOptions:
    """isl's options for a graph: whole-component clustering, except for a
    graph with loops over tiles of whole dims (sdg-tile's derived bounds, no
    causal prefix). There that heuristic clusters a tile loop with unrelated
    loops (PPO's actor tiles into the GAE loop over t, the bias gradients'
    partial sums into loops of their own, every tile value then kept for all N
    tiles); isl's incremental clustering and the loop-fusion post-pass give
    one loop over the tiles per epoch. PPO tiled by 25 steps (B = 64, T =
    200): 70.9 -> 53.4 ms/iteration, its schedule 18.2 -> 7.3 s. Prefix tiles
    (`[t, 0:t floordiv 16 + 1]`) keep whole-component clustering, which puts
    each step's final reduction in the loop over t that makes its tiles."""
    if not graph.derived:
        return ScheduleOptions()
    tiles = {d.step.name for d in graph.dims if d.bound.name in graph.derived}
    steps = set(graph.steps)
    for node in graph.nodes:
        for edge in node.edges:
            for dim, c in zip(graph.nodes[edge.source].domain, edge.dep.components):
                if dim in tiles and isinstance(c, Slice) and {s.name for s in c.free_symbols} & steps:
                    return ScheduleOptions()      # the tiles a step reads depend on the step
    return ScheduleOptions(whole_component=False)


@dataclass
class GraphSchedule:
    graph: Graph
    poly: Polyhedral
    domains: dict[int, isl.Set]                 # where each node runs: valid and needed points
    validity: list[tuple[int, int, isl.Map]]    # (sink, operand, source -> sink)
    proximity: list[tuple[int, int, isl.Map]]
    schedule: isl.Schedule
    options: ScheduleOptions = field(default_factory=ScheduleOptions)
    requirements: list[Requirement] = field(default_factory=list)
    valid: dict[int, isl.Set] | None = None     # valid (computable) domain of each node
    phases: list | None = None                  # sdg.stop_when: statement sets whose loops are generated apart

    def check_bounds(self, bounds: Mapping[str, int]) -> None:
        """Raises UncomputableError if, with `bounds` ({bound name: int >= 1}),
        some output or UDF has a point that cannot be computed. Cheap when
        every bound works (no requirements): call it before every run."""
        for req in self.requirements:
            if self.poly.fix(req.params, bounds).is_empty():
                raise uncomputable_error(self, req, bounds)

    def text(self) -> str:
        return str(self.schedule)

    def schedule_map(self) -> isl.UnionMap:
        """Statement instance -> execution time (lexicographic order) as the
        schedule tree says; computed once per schedule (storage planning asks
        for it per value and capacity). `loop_tree()` is checked to run
        dependences in the same order."""
        cached = self.__dict__.get("_schedule_map")
        if cached is None or cached[0] is not self.schedule:
            cached = self.__dict__["_schedule_map"] = (self.schedule, self.schedule.get_map())
        return cached[1]

    def executed(self) -> dict[int, isl.Map]:
        """Node index -> its instances' execution times in `loop_tree()`."""
        self.loop_tree()
        return self.__dict__["_tree"][2]

    def ast(self) -> isl.AstNode:
        build = isl.AstBuild.from_context(self.poly.context)
        return build.node_from_schedule(self.schedule)

    def statements(self) -> list[int]:
        return sorted(k for k, d in self.domains.items() if not d.is_empty())

    def loop_tree(self) -> list:
        """The loop tree that executes the schedule, checked: every needed
        instance runs exactly once and every dependence source first, in the
        order the tree really runs (`executed_order`). When isl's AST does
        not follow the schedule, the schedule with its 0-dimensional
        statements lifted to one dimension is tried; if that fails too, an
        internal ScheduleError is raised rather than loops that compute the
        wrong values."""
        cached = self.__dict__.get("_tree")
        if cached is not None and cached[0] is self.schedule:
            return cached[1]
        tree, order, problem = self._scan(self.schedule, lifted=False)
        if problem is not None:
            lifted = lift_zero_dim(self.schedule)
            if lifted is not None:
                tree, order, _ = self._scan(lifted, lifted=True)
        if order is None:
            raise ScheduleError(f"internal error: isl's loop AST for @{self.graph.name} does not follow its "
                                f"schedule: {problem[1]}", [(problem[0], problem[1])])
        self.__dict__["_tree"] = (self.schedule, tree, order)
        return tree

    def _scan(self, schedule: isl.Schedule, lifted: bool):
        """(tree, executed order, None) for the AST of `schedule`, or
        (None, None, (node, what is wrong)). With `phases`, one AST per phase,
        one after the other."""
        tree = []
        for phase in (self.phases or [None]):
            part = schedule if phase is None else schedule.intersect_domain(_statements_named(schedule, phase))
            tree += from_isl(isl.AstBuild.from_context(self.poly.context).node_from_schedule(part))
        if lifted:
            drop_lifted_args(tree, self.graph)
        tree = peel_equality_guards(tree)   # checked below like the rest of the tree
        order, problem = self.verify_tree(tree)
        return (tree, order, None) if problem is None else (None, None, problem)

    def verify_tree(self, tree: list):
        """({node index: its instances -> execution times}, None) if `tree`
        runs every needed instance exactly once and every dependence source
        first; else (None, (node index, what is wrong))."""
        order = executed_order(tree, self.poly.ctx, self.poly.context)
        for k in sorted(set(order) | set(self.statements())):
            node = self.graph.nodes[k]
            runs = order.get(k)
            if runs is None or not runs.domain().is_equal(self.domains[k]):
                return None, (k, f"{node.describe()} does not run at exactly its points")
            if not runs.is_single_valued():
                return None, (k, f"{node.describe()} runs some point twice")
        bad = self._violated(union_maps(order[k] for k in sorted(order)) if order else
                             isl.UnionMap.empty(self.poly.context.get_space()), order)
        if bad is not None:
            sink, number = bad
            node = self.graph.nodes[sink]
            return None, (sink, f"{node.describe()} operand {number} ({node.edges[number].dep_text}) "
                                f"runs after its reader")
        return order, None

    def check(self, what: str | None = None) -> None:
        """Every validity pair runs source first in the schedule tree's order
        and in the loop tree's (isl results are re-checked; `what` names a
        schedule that was not computed here)."""
        bad = self._violated(self.schedule_map())
        if bad is None:
            self.loop_tree()
            return
        sink, number = bad
        node = self.graph.nodes[sink]
        summary = (f"{what} violates a dependence (re-run sdg-schedule)" if what else
                   f"internal error: the schedule of @{self.graph.name} violates a dependence")
        raise ScheduleError(summary, [(sink, f"{node.describe()} operand {number} ({node.edges[number].dep_text})")])

    def _violated(self, theta: isl.UnionMap, per_node: dict | None = None) -> tuple[int, int] | None:
        """The first (sink, operand) whose dependence `theta` (instance ->
        time; `per_node`: the same, node index -> map) does not run source
        first, or None (dependence_check.first_violated)."""
        return first_violated(self.graph, self.domains, self.validity, theta, per_node)

    def _violated_pairwise(self, theta: isl.UnionMap) -> tuple[int, int] | None:
        return first_violated_pairwise(self.graph, self.domains, self.validity, theta)


def _configure(ctx: isl.Context, options: ScheduleOptions) -> None:
    ctx.set_schedule_whole_component(1 if options.whole_component else 0)


def _rewrite(schedule: isl.Schedule, node_type, rewrite, what: str) -> isl.Schedule:
    """`rewrite(node)` applied to every node of `node_type`, bottom up; the
    schedule map must not change. islpy turns an exception in the callback
    into a warning, so failures are collected and the result checked."""
    failures = []

    def visit(node):
        try:
            if node.get_type() == node_type:
                node = rewrite(node)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)
        return node
    result = schedule.get_root().map_descendant_bottom_up(visit).get_schedule()
    if failures or not result.get_map().is_equal(schedule.get_map()):
        raise RuntimeError(f"{what} failed: {failures[:1]}")
    return result


def _sequential(schedule: isl.Schedule) -> isl.Schedule:
    """Every `set` node (children in any order) becomes a `sequence` in the
    order of its children, the order `schedule_map()` gives them. The store
    plans are checked against that map; isl's AST generator may order a
    set's children otherwise, and did: a reader of a ring slot ran after the
    slot was written again (fuzz finding F6)."""
    def serialize(node):
        filters = isl.UnionSetList.alloc(node.get_ctx(), node.n_children())
        for i in range(node.n_children()):
            filters = filters.add(node.child(i).filter_get_filter())
        return node.insert_sequence(filters)
    return _rewrite(schedule, isl.schedule_node_type.set, serialize, "making the schedule's set nodes sequences")


def _separate(schedule: isl.Schedule, graph: Graph, max_ops: int) -> isl.Schedule:
    """Marks `separate` the members of every band whose statements run at most
    `max_ops` ops per point (an island counts its body's ops).

    Separating splits a loop into pieces with a fixed set of statements each:
    the prologue and epilogue iterations get their own straight-line code and
    the steady-state loop no guards. That pays off for small bodies, where a
    guard (a merge's select on the carried state, a window's length before it
    fills) costs as much as the step's work. For a large body it does not:
    every piece is another copy of the body that XLA compiles (a decode's
    peeled first and last generated steps compiled for 8 of its 14 s to the
    first token), while the guards it saves are a scalar test per step."""
    def mark(node):
        sets = node.get_domain().get_set_list()
        weight = sum(op_weight(graph.nodes[int(sets.get_at(i).get_tuple_name()[1:])])
                     for i in range(sets.n_set()))
        if weight <= max_ops:
            for i in range(node.band_n_member()):
                node = node.band_member_set_ast_loop_type(i, isl.ast_loop_type.separate)
        return node
    return _rewrite(schedule, isl.schedule_node_type.band, mark, "marking the schedule's bands 'separate'")


def _derive(graph: Graph, options: ScheduleOptions, ctx: isl.Context | None = None):
    poly = Polyhedral(graph, ctx)
    try:
        valid = poly.valid_domains(options.max_updates)
    except NotConverged as e:
        raise invalid_points_error(graph, e.nodes) from None
    requirements = find_requirements(graph, poly, valid)
    domains = needed_domains(poly, valid)
    validity = [v for v in poly.validity(domains) if not v[2].is_empty()]
    return poly, valid, domains, validity, requirements


def schedule_graph(graph: Graph, options: ScheduleOptions | None = None) -> GraphSchedule:
    """Computes the schedule of `graph`; raises ScheduleError if there is none."""
    options = options or ScheduleOptions()
    poly, valid, domains, validity, requirements = _derive(graph, options)
    # divs made explicit: a domain cut by a modulo condition (`(t - 2) % 2 == 0`)
    # and a shifted read can carry existential divs that isl's AST builder
    # refuses ("input involves unknown divs"), found by the fuzz generator
    # (only where a domain has divs: compute_divs on every domain doubled a
    # 32-layer decode's compile time, 5.8 -> 10.7 s)
    domains = _explicit_divs(domains)
    _configure(poly.ctx, options)
    live = [k for k in sorted(domains) if not domains[k].is_empty()]
    # sdg.stop_when: the conditions' ops run first, then the rest (stopping.py)
    stops = graph_stops(graph)
    if stops:
        problem = stop_slice_error(graph, stops)
        if problem is not None:
            raise ScheduleError(*problem)
    after_stop = set().union(*(s.dependent for s in stops)) if stops else set()
    first = stop_phase(graph, stops)
    if not live:
        schedule = isl.Schedule.from_domain(isl.UnionSet.empty(poly.context.get_space()))
    else:
        # Sources that run once (params, constants: no domain, no operands) go
        # first, as a prologue: nothing they need comes before them, and left
        # to isl they get scattered through the loop nest, which makes the
        # AST generation superlinear (17 s for a 32-layer decode, 0.2 s at 16).
        sources = [k for k in live if not graph.nodes[k].domain and not graph.nodes[k].edges and k not in after_stop]
        rest = [k for k in live if k not in sources]
        proximity = ([v for v in validity if poly.is_bounded(graph.nodes[v[0]].edges[v[1]].source, v[0], v[2])]
                     if options.proximity else [])
        schedule = None
        # with stops: the stops and what they read, then the rest, each scheduled alone
        parts = [[k for k in rest if k in first], [k for k in rest if k not in first]] if stops else [rest]
        for n, part in enumerate(parts):
            if part:   # the stops' loops: one loop each, no iterations peeled after it (atomic)
                one = _isl_schedule(graph, poly, domains, validity, proximity, options, set(part),
                                    atomic=bool(stops) and n == 0)
                schedule = one if schedule is None else schedule.sequence(one)
        if sources:
            prologue = isl.Schedule.from_domain(_union_sets(domains[k] for k in sources))
            schedule = prologue if schedule is None else prologue.sequence(schedule)
    result = GraphSchedule(graph, poly, domains, validity,
                           proximity if live else [], schedule, options, requirements, valid)
    result.phases = _phases(graph, domains, stops)
    result.check()
    _check_stops(result, stops)
    return result


def _isl_schedule(graph: Graph, poly, domains: dict, validity: list, proximity: list, options: ScheduleOptions,
                  scheduled: set, atomic: bool = False) -> isl.Schedule:
    """isl's schedule of the nodes `scheduled` (their dependences among themselves).
    `atomic`: every loop generated whole, with guards, never split into pieces
    by the bounds (a stop's loop: iterations peeled after it would run again
    the points it ran before the stop lowered the bound)."""
    sc = isl.ScheduleConstraints.on_domain(_union_sets(domains[k] for k in sorted(scheduled))).set_context(poly.context)
    inner = [v for v in validity if v[0] in scheduled and graph.nodes[v[0]].edges[v[1]].source in scheduled]
    near = [v for v in proximity if v[0] in scheduled and graph.nodes[v[0]].edges[v[1]].source in scheduled]
    if inner:
        sc = sc.set_validity(union_maps(m for _, _, m in inner))
    if near:
        sc = sc.set_proximity(union_maps(m for _, _, m in near))
    try:
        schedule = sc.compute_schedule()
    except isl.Error as e:
        raise cycle_error(graph, validity, str(e)) from None
    if schedule is None:
        raise cycle_error(graph, validity, "isl found no schedule")
    schedule = _sequential(schedule)
    if options.fuse_shifted:
        schedule = fuse_shifted_loops(schedule, graph, domains, inner)
    if atomic:
        schedule = _atomic(schedule)
    elif options.separate:
        schedule = _separate(schedule, graph, options.separate_max_ops)
    return schedule


def _atomic(schedule: isl.Schedule) -> isl.Schedule:
    """Every band member marked `atomic`: one loop, its statements guarded."""
    def mark(node):
        for i in range(node.band_n_member()):
            node = node.band_member_set_ast_loop_type(i, isl.ast_loop_type.atomic)
        return node
    return _rewrite(schedule, isl.schedule_node_type.band, mark, "marking the stop's bands 'atomic'")


def _phases(graph: Graph, domains: dict, stops) -> list | None:
    """With stops: the statements of each part of the run whose loops are
    generated apart (the stops and what they read, then the rest: a loop nest
    generated for all of it would test the bound once, before the stop lowers
    it, in conditions that choose the code after it)."""
    if not stops:
        return None
    first = stop_phase(graph, stops)
    live = [k for k in sorted(domains) if not domains[k].is_empty()]
    parts = [[k for k in live if k in first or (not graph.nodes[k].domain and not graph.nodes[k].edges
                                                 and not any(k in s.dependent for s in stops))]]
    parts.append([k for k in live if k not in parts[0]])
    return [{statement_name(k) for k in part} for part in parts if part]


def _statements_named(schedule: isl.Schedule, names: set) -> isl.UnionSet:
    """The part of the schedule's domain whose statements are named in `names`."""
    sets = schedule.get_domain().get_set_list()
    return _union_sets([sets.get_at(i) for i in range(sets.n_set()) if sets.get_at(i).get_tuple_name() in names]
                       or [isl.Set.empty(schedule.get_domain().get_space())])


def _check_stops(result: GraphSchedule, stops) -> None:
    """Every op that reads a stopped bound runs after every instance of its stop."""
    if not stops:
        return
    bad = check_stop_order(result.executed(), stops)
    if bad is not None:
        stop, k = bad
        node = result.graph.nodes[k]
        raise ScheduleError(f"internal error: the schedule of @{result.graph.name} runs {node.describe()}, which "
                            f"reads a stopped bound, before the sdg.stop_when at "
                            f"{result.graph.nodes[stop].location} is known", [(k, node.describe())])


def _explicit_divs(domains: dict[int, isl.Set]) -> dict[int, isl.Set]:
    return {k: d.compute_divs() if _has_divs(d) else d for k, d in domains.items()}


def _has_divs(domain: isl.Set) -> bool:
    return any(b.dim(isl.dim_type.div) for b in domain.get_basic_sets())


def _union_sets(sets) -> isl.UnionSet:
    sets = list(sets)
    out = isl.UnionSet.from_set(sets[0])
    for s in sets[1:]:
        out = out.add_set(s)
    return out


def load_schedule(graph: Graph, text: str, options: ScheduleOptions | None = None) -> GraphSchedule:
    """A GraphSchedule from a schedule tree saved with `text()` (computed with `options`)."""
    options = options or ScheduleOptions()
    poly, valid, domains, validity, requirements = _derive(graph, options)
    domains = _explicit_divs(domains)
    try:
        schedule = isl.Schedule.read_from_str(poly.ctx, text)
    except isl.Error as e:
        raise ScheduleError(f"invalid schedule attribute for @{graph.name}: {e}", []) from None
    result = GraphSchedule(graph, poly, domains, validity, [], schedule, options, requirements, valid)
    result.phases = _phases(graph, domains, graph_stops(graph))
    expected = isl.UnionSet.empty(poly.context.get_space())
    for k in result.statements():
        expected = expected.add_set(domains[k])
    if not schedule.get_domain().is_equal(expected):
        raise ScheduleError(f"the schedule attribute of @{graph.name} does not match its operators "
                            f"(re-run sdg-schedule)", [])
    result.check(f"the schedule attribute of @{graph.name}")
    _check_stops(result, graph_stops(graph))
    return result
