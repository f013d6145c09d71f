"""`sdg-schedule`: compute an isl schedule for every `sdg.graph`.

Attaches the schedule tree (isl's text form) to the graph as the string
attribute `tidal.schedule`; `sdg-lower-to-scf` turns it into loops. See
`schedule.py` for how the constraints are built.

Before:

    sdg.graph @g dims [t < T] {
      %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
      %r = sdg.unary tanh %x[t] domain [t] : ...
      %g = sdg.reduce sum [0] %r[t:min(t + 3, T)] domain [t] : ...
      sdg.output "g" %g[t] domain [t] : !tidal.tensor<[4], f32>
    }

After (`%g` runs two steps behind `%r`, in the same loop):

    sdg.graph @g dims [t < T] attributes {tidal.schedule = "{ domain: \\"[T] -> { S2[t] ... }\\", child: { schedule: \\"[T] -> [{ S2[t] -> [(2 + t)]; S1[t] -> [(t)]; ... }]\\", ... } }"} {
      ...
    }

An unschedulable graph fails the pass with an error that names the
operators, their dependence expressions and their locations.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.passes.base import ModulePass, PassFailure, option

from .graph import GraphError, graphs_in, read_graph
from . import schedule_cache
from .schedule import ScheduleError, ScheduleOptions
from .to_scf import SCHEDULE_ATTR

__all__ = ["SdgSchedule"]


def culprit(graph, error: ScheduleError):
    """The op an error is best reported at: the last operator named."""
    for index, _ in reversed(error.diagnostics):
        if index is not None:
            return graph.nodes[index].op
    return graph.op


@dataclass
class SdgSchedule(ModulePass):
    """Schedules every `sdg.graph` with isl; see the module docstring."""

    name: ClassVar[str] = "sdg-schedule"
    summary: ClassVar[str] = "Compute a polyhedral (isl) schedule for each sdg.graph (attribute tidal.schedule)"

    whole_component: bool = option(True, "isl whole-component scheduling (fuses at any constant distance)")
    proximity: bool = option(True, "add proximity constraints for bounded dependences (needed for fusion)")
    separate: bool = option(True, "split prologue/epilogue iterations out of steady-state loops")
    separate_max_ops: int = option(64, "separate only loops whose body runs at most this many ops "
                                       "(islands count their body; larger bodies keep guards, compiled once)")
    fuse_shifted: bool = option(True, "fuse a loop into the loop it reads, a constant number of steps behind "
                                      "(loop_fusion.py)")

    @classmethod
    def with_options(cls, options: ScheduleOptions) -> "SdgSchedule":
        """The pass that schedules with `options` (the runtime's)."""
        return cls(whole_component=options.whole_component, proximity=options.proximity,
                   separate=options.separate, separate_max_ops=options.separate_max_ops,
                   fuse_shifted=options.fuse_shifted)

    def options(self) -> ScheduleOptions:
        return ScheduleOptions(whole_component=self.whole_component, proximity=self.proximity,
                               separate=self.separate, separate_max_ops=self.separate_max_ops,
                               fuse_shifted=self.fuse_shifted)

    def schedule(self, graph_op: ir.Operation, graph=None):
        """Schedules one graph (read from `graph_op` unless given), attaches the
        schedule and returns it. Raises GraphError or ScheduleError: `run` makes
        them pass failures, p.compile() reports them at the user's line."""
        graph = graph if graph is not None else read_graph(graph_op)
        sched = schedule_cache.schedule(graph, self.options(), graph_op)
        graph_op.attributes[SCHEDULE_ATTR] = ir.StringAttr.get(sched.text(), context=graph_op.context)
        return sched

    def run(self, op: ir.Operation) -> None:
        for graph_op in graphs_in(op):
            graph = None
            try:
                graph = read_graph(graph_op)
                self.schedule(graph_op, graph)
            except GraphError as e:  # unreadable, or a dependence isl cannot represent
                raise PassFailure(e.message, e.op or graph_op) from None
            except ScheduleError as e:
                raise PassFailure(str(e), culprit(graph, e)) from None
