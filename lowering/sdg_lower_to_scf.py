"""`sdg-lower-to-scf`: turn each scheduled `sdg.graph` into a `func.func`.

Needs the `tidal.schedule` attribute of `sdg-schedule`. After the graph it
inserts one private declaration per scheduled operator and the function
`@<graph>_run(bounds...)`, whose loops (`scf.for`, `scf.if`, `arith`) scan
the schedule and call the declarations; see `to_scf.py`. Between its
top-level statements, calls of `@<graph>_alloc<k>()` / `@<graph>_free<k>()`
start and end the lifetime of node k's store (lifetimes.py): a value is
freed after the last statement that reads it. A call of a merge that can
take only some of its branches where it runs carries them
(`{tidal.branches = array<i64: 1>}`, merge_branches.py).

Before (after `sdg-schedule`):

    sdg.graph @g dims [t < T] attributes {tidal.schedule = "..."} {
      %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
      %y = sdg.unary exp %x[t] domain [t] : ...
      sdg.output "y" %y[t] domain [t] : !tidal.tensor<[4], f32>
    }

After:

    sdg.graph @g ... { ... }
    func.func private @g_op0(index) attributes {tidal.graph = @g, tidal.op = "%0 = sdg.input \\"x\\"", tidal.op_index = 0 : i64}
    func.func private @g_op1(index) attributes {...}
    func.func private @g_op2(index) attributes {...}
    func.func @g_run(%arg0: index) attributes {tidal.bounds = ["T"], tidal.graph = @g} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %arg1 = %c0 to %arg0 step %c1 {
        func.call @g_op0(%arg1) : (index) -> ()
        func.call @g_op1(%arg1) : (index) -> ()
        func.call @g_op2(%arg1) : (index) -> ()
      }
      return
    }
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.passes.base import ModulePass, PassFailure

from .graph import GraphError, graphs_in, read_graph
from .lifetimes import memory_events
from .merge_branches import mark_reachable_branches
from .schedule import ScheduleError, load_schedule
from .sdg_schedule import culprit
from .to_scf import SCHEDULE_ATTR, lower_to_text, symbol_ref

__all__ = ["SdgLowerToScf", "lower_graph_op"]


def lower_graph_op(graph_op: ir.Operation, sched=None) -> list[ir.Operation]:
    """Lowers one scheduled graph; inserts and returns the new functions.

    `sched`: the GraphSchedule that `schedule_graph` computed for this graph op
    in this process (the runtime passes it). It is used as is, instead of
    re-reading the `tidal.schedule` attribute and deriving the domains again:
    isl's text of a set need not read back to a set the derivation compares
    equal in a long-running process (fuzz finding F9)."""
    if sched is not None:
        graph = sched.graph
    else:
        graph = read_graph(graph_op)
        if SCHEDULE_ATTR not in graph_op.attributes:
            raise PassFailure(f"sdg.graph @{graph.name} has no {SCHEDULE_ATTR} attribute: run sdg-schedule first",
                              graph_op)
        attr = graph_op.attributes[SCHEDULE_ATTR]
        if not isinstance(attr, ir.StringAttr):
            raise PassFailure(f"the {SCHEDULE_ATTR} attribute of sdg.graph @{graph.name} is not a string "
                              f"(re-run sdg-schedule)", graph_op)
        text = ir.StringAttr(attr).value
        try:
            sched = load_schedule(graph, text)
        except ScheduleError as e:
            raise PassFailure(str(e), culprit(graph, e)) from None
    try:
        tree = sched.loop_tree()
    except ValueError as e:  # a hand-written schedule attribute isl scans with unsupported loops
        raise PassFailure(f"cannot lower the schedule of sdg.graph @{graph.name}: {e}", graph_op) from None
    mark_reachable_branches(tree, sched)
    _erase_previous(graph_op, graph.name)
    statements = sched.statements()
    source = lower_to_text(graph, tree, statements, memory_events(graph, tree, statements))
    parsed = ir.Module.parse(source, graph_op.context)
    new_ops, anchor = [], graph_op
    for op in list(parsed.body.operations):
        op = op.operation
        op.move_after(anchor)
        anchor = op
        new_ops.append(op)
    return new_ops


def _erase_previous(graph_op: ir.Operation, name: str) -> None:
    """Functions of an earlier lowering of this graph go: lowering twice is
    the same as lowering once (with the current schedule)."""
    block = graph_op.parent.regions[0].blocks[0]
    for op in list(block.operations):
        op = op.operation
        if op.name == "func.func" and "tidal.graph" in op.attributes and \
                str(op.attributes["tidal.graph"]) == symbol_ref(name):
            op.erase()


@dataclass
class SdgLowerToScf(ModulePass):
    """Lowers every scheduled `sdg.graph`; see the module docstring."""

    name: ClassVar[str] = "sdg-lower-to-scf"
    summary: ClassVar[str] = "Lower scheduled sdg.graphs to func/scf/arith loops calling one function per operator"

    def run(self, op: ir.Operation) -> None:
        for graph_op in graphs_in(op):
            try:
                lower_graph_op(graph_op)
            except GraphError as e:
                raise PassFailure(e.message, e.op or graph_op) from None
