"""A checker for generated schedules: run the lowered program with recording
launchers and verify it against the polyhedral model, for concrete bounds.

    report = check_schedule(exe, {"T": 5})   # raises ScheduleCheckError

* every point of every scheduled node's (valid) domain runs exactly once,
  and nothing else runs;
* for every dependence (every pair "sink instance reads source instance"),
  the source ran before the sink, and both ran while the source's store was
  allocated (after its `_alloc`, before its `_free`: no value is freed
  before its last reader; lowering/lifetimes.py).

It executes the *host program generated from the lowered MLIR* (hostgen.py),
so it checks scheduling, the scf lowering and the translation together.
"""
from __future__ import annotations

from dataclasses import dataclass

from tidal.dialects.attrs import with_derived
from tidal.lowering.to_scf import run_function_name
from tidal.symbolic.isl_bridge import points

from .hostgen import HELPERS, host_source

__all__ = ["check_schedule", "ScheduleCheckError", "CheckReport", "record_execution"]


class ScheduleCheckError(AssertionError):
    pass


@dataclass
class CheckReport:
    executions: int
    dependences: int
    order: list


def record_execution(exe, bounds: dict, memory: list | None = None) -> list[tuple[int, tuple]]:
    """[(node, point), ...] in the order the lowered program runs them;
    `memory` gets its store lifetimes, `("alloc" | "free", node, executions before it)`.
    `bounds` are a run's: the derived ones (sdg-tile's tile counts) are computed."""
    bounds = _with_derived(exe, bounds)
    source, names = host_source(exe.root, run_function_name(exe.graph), set())
    log: list = []
    ns = dict(HELPERS)
    for kind in ("alloc", "free"):
        ns[f"_{kind}"] = (lambda kind: lambda k, quiet=False:
                          memory is not None and memory.append((kind, k, len(log))))(kind)
    for k in exe.statements:
        ns[f"_L{k}"] = (lambda k: lambda *p: log.append((k, tuple(p))))(k)
    exec(compile(source, "<recorded schedule>", "exec"), ns)  # noqa: S102
    ns["_program"](*(bounds[b] for b in names))
    return log


def _with_derived(exe, bounds: dict) -> dict:
    derived = {k: v for k, v in exe.graph.derived.items() if k not in bounds}
    return with_derived(bounds, derived)


def check_schedule(exe, bounds: dict) -> CheckReport:
    sched = exe.sched
    bounds = _with_derived(exe, bounds)
    memory: list = []
    log = record_execution(exe, bounds, memory)
    allocated, freed = _lifetimes(exe, memory)
    position: dict = {}
    for i, item in enumerate(log):
        if item in position:
            raise ScheduleCheckError(f"{exe.graph.nodes[item[0]].label} ran twice at {item[1]}")
        position[item] = i
    expected = set()
    for k, domain in sched.domains.items():
        for p in points(sched.poly.fix(domain, bounds)):
            expected.add((k, tuple(p)))
    missing = expected - set(position)
    extra = set(position) - expected
    if missing:
        k, p = sorted(missing)[0]
        raise ScheduleCheckError(f"{exe.graph.nodes[k].label} never ran at {p} ({len(missing)} missing)")
    if extra:
        k, p = sorted(extra)[0]
        raise ScheduleCheckError(f"{exe.graph.nodes[k].label} ran at {p}, outside its domain")
    count = 0
    for sink, number, m in sched.validity:
        source = exe.graph.nodes[sink].edges[number].source
        n_src = len(exe.graph.nodes[source].domain)
        for pair in points(sched.poly.fix(m, bounds)):
            a, b = (source, tuple(pair[:n_src])), (sink, tuple(pair[n_src:]))
            count += 1
            if position[a] >= position[b]:
                edge = exe.graph.nodes[sink].edges[number]
                raise ScheduleCheckError(
                    f"{exe.graph.nodes[sink].label} at {b[1]} reads %{source}{edge.dep_text} at {a[1]}, "
                    f"which runs later (position {position[a]} >= {position[b]})")
            if position[b] >= freed.get(source, len(log)) or position[a] < allocated.get(source, 0):
                edge = exe.graph.nodes[sink].edges[number]
                raise ScheduleCheckError(
                    f"{exe.graph.nodes[sink].label} at {b[1]} reads %{source}{edge.dep_text} at {a[1]} outside "
                    f"the lifetime of its store (written at {position[a]}, read at {position[b]}, allocated "
                    f"at {allocated.get(source, 0)}, freed at {freed.get(source, '-')})")
    return CheckReport(len(log), count, log)


def _lifetimes(exe, memory: list) -> tuple[dict, dict]:
    """{node: executions before its alloc}, {node: executions before its free};
    a store allocated or freed twice, an output freed, or an alloc after the
    free is an error."""
    allocated: dict = {}
    freed: dict = {}
    for kind, k, at in memory:
        table = allocated if kind == "alloc" else freed
        if k in table:
            raise ScheduleCheckError(f"the store of {exe.graph.nodes[k].label} is {kind}ed twice")
        if kind == "free" and exe.graph.nodes[k].name == "sdg.output":
            raise ScheduleCheckError(f"the store of {exe.graph.nodes[k].label} (a result) is freed")
        table[k] = at
    for k, at in allocated.items():
        if at > freed.get(k, at):
            raise ScheduleCheckError(f"the store of {exe.graph.nodes[k].label} is freed before it is allocated")
    return allocated, freed
