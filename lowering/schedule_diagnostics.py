"""The errors of scheduling (schedule.py) and the messages that explain them.

`ScheduleError` for a graph that cannot be scheduled: a cycle in its
dependences (`cycle_error` names the operators on it) or outputs whose points
can never be computed (`invalid_points_error` finds bounds and a point and
traces the chain of reads that leaves a domain). `UncomputableError` for a
run whose bounds leave a needed point uncomputable (`uncomputable_error`,
raised by `GraphSchedule.check_bounds`), and the `Requirement`s that say which
bounds each output or UDF needs (`find_requirements`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import islpy as isl

from tidal.dialects.attrs import with_derived
from tidal.symbolic.isl_bridge import isl_name, points

from .graph import Graph
from .polyhedral import Polyhedral, statement_name

if TYPE_CHECKING:
    from .schedule import GraphSchedule

__all__ = ["ScheduleError", "UncomputableError", "Requirement", "uncomputable_error"]


class ScheduleError(ValueError):
    """The graph cannot be scheduled. `diagnostics` is a list of
    `(node index or None, message)`; str() is the whole report."""

    def __init__(self, summary: str, diagnostics: list[tuple[int | None, str]]):
        self.summary = summary
        self.diagnostics = diagnostics
        super().__init__("\n".join([summary] + ["  " + m for _, m in diagnostics]))


class UncomputableError(RuntimeError):
    """A run whose bounds leave a point that an output or a UDF needs
    uncomputable (a chain of reads that leaves a producer's domain). str()
    starts with the location of the op whose read leaves the domain.

    Attributes: `location` (`file:line:col` of that op), `op` (its label,
    e.g. `%1 = sdg.binary add`), `node` (its index), `required` (index of the
    output or UDF), `bounds` ({name: value}) and `condition` (the bounds the
    program needs, as text: `T >= 2`)."""

    def __init__(self, message: str, *, location: str | None = None, op: str | None = None,
                 node: int | None = None, required: int | None = None, bounds: dict | None = None,
                 condition: str = ""):
        super().__init__(message)
        self.message = message
        self.location = location
        self.op = op
        self.node = node
        self.required = required
        self.bounds = dict(bounds or {})
        self.condition = condition


@dataclass
class Requirement:
    """An output or UDF that can be computed at every point of its domain
    only for some bounds: `params` is that isl parameter set, `condition`
    the same as text (`T >= 2`)."""

    node: int
    params: isl.Set
    condition: str


def union_maps(maps) -> isl.UnionMap:
    """The union of the isl `maps` (None if there are none)."""
    result = None
    for m in maps:
        um = isl.UnionMap.from_map(m)
        result = um if result is None else result.union(um)
    return result


# -- diagnostics ------------------------------------------------------------------------------
_REQUIRED = ("sdg.output", "sdg.udf", "sdg.stop_when")


def _param_point(s: isl.Set) -> dict | None:
    """The lexicographically smallest bounds in the parameter set `s`."""
    names = [s.get_dim_name(isl.dim_type.param, i) for i in range(s.dim(isl.dim_type.param))]
    moved = s.move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, len(names))
    if moved.is_empty():
        return None
    found = points(moved.lexmin())
    return dict(zip(names, found[0])) if found else None


def _without_param(s: isl.Set, name: str) -> isl.Set:
    pos = s.find_dim_by_name(isl.dim_type.param, name)
    return s.project_out(isl.dim_type.param, pos, 1) if pos >= 0 else s


def _condition_text(s: isl.Set, context: isl.Set, hide: Sequence[str] = ()) -> str:
    """`T >= 2` for `[T] -> { : T >= 2 }` (simplified knowing every bound >= 1).
    `hide`: derived bounds (sdg-tile's tile counts, which the context ties to
    the user's bounds: N = (T + 15) // 16) projected out, so that the condition
    names only bounds the user gives."""
    if hide:
        s = s.intersect(context)
        for name in hide:
            s, context = _without_param(s, name), _without_param(context, name)
    text = str(s.gist(context).coalesce())
    body = text[text.index("{") + 1:text.rindex("}")].strip()
    body = body[1:].strip() if body.startswith(":") else body
    return body or "true"


def find_requirements(graph: Graph, poly: Polyhedral, domains: dict) -> list[Requirement]:
    """Outputs and UDFs run at every point of their domain: for each that has
    points that cannot be computed for some bounds, the bounds where it can.
    Raises ScheduleError if no bounds with every bound >= 2 work for all."""
    requirements = []
    ok_all = poly.context
    for node in graph.nodes:
        k = node.index
        if node.name not in _REQUIRED:
            continue
        bad = poly.full[k].subtract(domains[k])
        if bad.is_empty():
            continue
        ok = poly.context.subtract(bad.params()).coalesce()
        requirements.append(Requirement(k, ok, _condition_text(ok, poly.context,
                                                               [isl_name(b) for b in graph.derived])))
        ok_all = ok_all.intersect(ok)
    if requirements:
        at_least_2 = poly.context
        for name in [isl_name(b) for b in graph.bounds if b not in graph.derived]:
            at_least_2 = at_least_2.intersect(poly._set(f"[{name}] -> {{ : {name} >= 2 }}"))
        if ok_all.intersect(at_least_2).is_empty():
            witness = _param_point(at_least_2.subtract(ok_all))
            fixed = None if witness is None else {b: witness.get(isl_name(b), 2) for b in graph.bounds}
            culprits = [r.node for r in requirements
                        if witness is None or poly.fix(r.params, fixed).is_empty()]
            raise invalid_points_error(graph, culprits, fixed)
    return requirements


def _point_text(graph: Graph, node_index: int, p: tuple) -> str:
    names = graph.nodes[node_index].domain
    return ", ".join(f"{n} = {v}" for n, v in zip(names, p)) or "its only point"


def _trace(graph: Graph, poly: Polyhedral, valid: dict, k: int, p: tuple):
    """Why point `p` of node `k` cannot be computed, one line per step:
    `(lines, fault)`, where `fault` is `(node, point, operand, source point)`
    for the read that leaves its producer's domain, `(node, point, None,
    None)` for a merge point where no branch holds, or None."""
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
                return lines, (k, p, None, None)
            edges = taken[:1]
        for b in edges:
            edge = node.edges[b]
            src = graph.nodes[edge.source]
            read = poly.reads[k][b].intersect_domain(point).range()
            branch = f"branch {b} (if <{edge.cond_text}>) " if node.name == "sdg.merge" else ""
            outside = read.subtract(poly.full[edge.source])
            if not outside.is_empty():
                q = points(outside.lexmin())[0]
                lines.append((k, f"{where}: {branch}reads %{edge.source}{edge.dep_text}, which includes "
                                 f"{_point_text(graph, edge.source, q)} outside the domain of "
                                 f"{src.describe()} ({_domain_text(graph, src)})"))
                return lines, (k, p, b, q)
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
            return lines, None


def _domain_text(graph: Graph, node) -> str:
    return ", ".join(f"0 <= {d.step.name} < {d.bound.name}" for d in graph.dims_of(node)) or "a single point"


def invalid_points_error(graph: Graph, nodes: list[int], witness: dict | None = None) -> ScheduleError:
    """Finds concrete bounds (`witness` first, then every bound 2, 3, 4, ...)
    and a point that cannot be computed and explains the chain of reads that
    leads outside a domain."""
    required = [n.index for n in graph.nodes if n.name in _REQUIRED] + list(nodes)
    candidates = [witness] if witness else []
    candidates += [with_derived({b: value for b in graph.bounds if b not in graph.derived}, graph.derived)
                   for value in (2, 3, 4, 6, 8, 12)]
    for fixed in candidates:
        poly = Polyhedral(graph, fixed=fixed)
        valid = poly.valid_domains(max_updates=10 ** 6)
        for k in required:
            bad = poly.full[k].subtract(valid[k])
            if bad.is_empty():
                continue
            p = points(bad.lexmin())[0]
            lines, _ = _trace(graph, poly, valid, k, p)
            node = graph.nodes[k]
            bounds = ", ".join(f"{b} = {fixed[b]}" for b in graph.bounds)
            example = f" (e.g. with {bounds})" if bounds else ""
            looping = len({d[0] for d in lines}) < len(lines) or any(
                "which needs" in m for _, m in lines[1:])
            if looping and len(lines) > 1:
                lines.append((None, "the dependences above form a chain that never reaches a base case "
                                    "(a recurrence must read points its definition by cases provides)"))
            return ScheduleError(f"cannot schedule @{graph.name}: {node.describe()} needs values that can "
                                 f"never be computed{example}:", lines)
    names = ", ".join(graph.nodes[k].describe() for k in nodes)
    return ScheduleError(f"cannot schedule @{graph.name}: the computable points of {names} do not converge",
                         [(k, graph.nodes[k].describe()) for k in nodes])


def _value_name(node) -> str:
    """How a run-time message names a value: `input "x"` or `'%3 = sdg.merge'`."""
    if node.name in ("sdg.input", "sdg.param"):
        return f'{node.name.split(".")[1]} {node.attrs.get("name", "")}'.strip()
    return f"'{node.label}'"


def uncomputable_error(sched: GraphSchedule, req: Requirement, bounds: Mapping[str, int]) -> UncomputableError:
    """The error of a run with `bounds` outside `req.params`: the op whose read
    leaves a domain (location, point, what it needs and the bound that
    excludes it) and the chain of reads from the output or UDF to it."""
    graph, poly = sched.graph, sched.poly
    fixed = {b: int(bounds[b]) for b in graph.bounds if b in bounds}
    bounds_text = ", ".join(f"{b} = {v}" for b, v in fixed.items() if b not in graph.derived)
    target = graph.nodes[req.node]
    fpoly = Polyhedral(graph, ctx=poly.ctx, fixed=fixed)
    valid = {k: fpoly.fix(v, fixed) for k, v in (sched.valid or sched.domains).items()}
    bad = fpoly.full[req.node].subtract(valid[req.node])
    lines, fault = ([], None) if bad.is_empty() else _trace(graph, fpoly, valid, req.node,
                                                             points(bad.lexmin())[0])
    common = dict(required=req.node, bounds=fixed, condition=req.condition)
    tail = (f"{target.describe()} cannot be computed with {bounds_text}; "
            f"@{graph.name} needs {req.condition}")
    if fault is None:
        return UncomputableError(f"{target.location}: {tail}" + "".join(f"\n  {m}" for _, m in lines),
                                 location=target.location, op=target.label, node=req.node, **common)
    k, p, b, q = fault
    node = graph.nodes[k]
    at = f" at {_point_text(graph, k, p)}" if node.domain else ""
    if b is None:
        conds = ", ".join(f"<{e.cond_text}>" for e in node.edges)
        what = f"has no branch whose condition holds ({conds}) with {bounds_text}"
    else:
        edge = node.edges[b]
        src = graph.nodes[edge.source]
        over = [d for d, c in zip(graph.dims_of(src), q) if c >= fixed.get(d.bound.name, c + 1)]
        where = f"{_value_name(src)} at {_point_text(graph, edge.source, q)}"
        if over:
            what = f"needs {where} but " + " and ".join(f"{d.bound.name} = {fixed[d.bound.name]}" for d in over)
        else:
            what = f"needs {where}, before the start of its domain"
        what += (f" (it reads %{edge.source}{edge.dep_text}; {_value_name(src)} at {src.location} has "
                 f"{_domain_text(graph, src)})")
    so = "" if k == req.node else f", so {tail}"
    if k == req.node:
        what += f"; @{graph.name} needs {req.condition}"
    message = f"{node.location}: '{node.label}'{at} {what}{so}"
    if len(lines) > 1:
        message += "".join(f"\n  {m}" for _, m in lines)
    return UncomputableError(message, location=node.location, op=node.label, node=k, **common)


def cycle_error(graph: Graph, validity, isl_message: str) -> ScheduleError:
    """The validity relation has a cycle: name the operators and dependences on it."""
    involved: set[int] = set()
    if validity:
        union = union_maps(m for _, _, m in validity)
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
