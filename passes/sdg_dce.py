"""sdg-dce: dead-code elimination on symbolic dependence graphs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects import ops_named

from .base import ModulePass, PassFailure, option

__all__ = ["SdgDeadCodeElimination"]

# Ops whose presence matters even if nothing reads them.
_OUTPUT = "sdg.output"
_UDF = "sdg.udf"


@dataclass
class SdgDeadCodeElimination(ModulePass):
    """Erases the operators of every `sdg.graph` that no graph output needs.

    An op is live if an `sdg.output` is reachable from it through operands
    (whatever the dependence expressions, and following cycles through
    `sdg.merge`), if it is an `sdg.udf` (external state: kept unless
    `keep-udfs=false`), if it is not an `sdg` op (kept, unknown effects), or
    if a live op reads it. Everything else is erased, unread `sdg.input`s and
    dead cycles included. Upstream `canonicalize` cannot do this: a dead
    cycle in a graph region still has uses, and `sdg.merge` is not `Pure`.

    Before:

        sdg.graph @g dims [t < T] {
          %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
          %y = sdg.unary exp %x[t] domain [t] : (...) -> !tidal.tensor<[4], f32>
          %a = sdg.merge %x[0] if <t eq 0>, %b[t - 1] if <true> domain [t] : ...
          %b = sdg.unary tanh %a[t] domain [t] : ...
          %o = sdg.udf "log"(%x[t]) domain [t] : (...) -> !tidal.tensor<[], f32>
          sdg.output "y" %y[t] domain [t] : !tidal.tensor<[4], f32>
        }

    After `sdg-dce` (the cycle %a/%b is gone, the UDF stays):

        sdg.graph @g dims [t < T] {
          %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
          %y = sdg.unary exp %x[t] domain [t] : (...) -> !tidal.tensor<[4], f32>
          %o = sdg.udf "log"(%x[t]) domain [t] : (...) -> !tidal.tensor<[], f32>
          sdg.output "y" %y[t] domain [t] : !tidal.tensor<[4], f32>
        }

    With `sdg-dce{keep-udfs=false}` the UDF goes too, since no output reads it.
    """

    name: ClassVar[str] = "sdg-dce"
    summary: ClassVar[str] = "Erase sdg.graph operators that no output (or UDF) needs, dead cycles included"

    keep_udfs: bool = option(True, "Keep sdg.udf ops (external state) and what they read, even if no output needs them")

    def run(self, op: ir.Operation) -> None:
        self.num_erased = 0  # for tests and callers: how many ops went
        for graph in ops_named(op, "sdg.graph"):
            self.num_erased += self._run_on_graph(graph)

    def _is_root(self, op: ir.Operation) -> bool:
        name = op.name
        if name in (_OUTPUT, "sdg.stop_when"):
            return True
        if name == _UDF:
            return self.keep_udfs
        # An island (sdg-fuse) is an operator like any other: its body reads
        # only its block arguments, so it lives if its results are read.
        return not name.startswith("sdg.") or (len(op.regions) > 0 and name != "sdg.island")

    def _run_on_graph(self, graph: ir.Operation) -> int:
        if len(graph.regions) != 1 or len(graph.regions[0].blocks) != 1:
            raise PassFailure("sdg-dce expects an sdg.graph with one block", graph)
        ops = [o.operation for o in graph.regions[0].blocks[0].operations]
        live: set = set()
        worklist = [o for o in ops if self._is_root(o)]
        live.update(worklist)
        while worklist:  # mark everything the roots read, through cycles
            for value in worklist.pop().operands:
                owner = value.owner
                if isinstance(owner, ir.Block):
                    continue  # a block argument: nothing to keep alive
                owner = owner.operation
                if owner not in live:
                    live.add(owner)
                    worklist.append(owner)
        dead = [o for o in ops if o not in live]
        if not dead:
            return 0
        dead_set = set(dead)
        for o in dead:  # checked before touching the IR: MLIR aborts on erasing a used op
            for result in o.results:
                for use in result.uses:
                    if use.owner.operation not in dead_set:
                        raise PassFailure("sdg-dce: internal error, a live op reads a dead one", o)
        # Dead ops are read only by dead ops (a live reader would have made
        # them live). Redirect those reads to placeholders so that no op is
        # erased while it still has uses -- dead cycles have no users-first
        # order -- then erase the dead ops and finally the placeholders.
        placeholders: dict[str, ir.Operation] = {}
        with graph.location:
            for o in dead:
                for result in o.results:
                    if not any(True for _ in result.uses):
                        continue
                    key = str(result.type)
                    if key not in placeholders:
                        placeholders[key] = ir.Operation.create(
                            "builtin.unrealized_conversion_cast", results=[result.type], operands=[])
                    result.replace_all_uses_with(placeholders[key].results[0])
        for o in reversed(dead):
            o.erase()
        for p in placeholders.values():
            p.erase()
        return len(dead)
