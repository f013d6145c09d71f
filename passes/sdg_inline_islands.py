"""sdg-inline-islands: undo `sdg-fuse`, putting every island's ops back in the graph."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects import ops_named

from .base import ModulePass

__all__ = ["SdgInlineIslands", "inline_islands"]


@dataclass
class SdgInlineIslands(ModulePass):
    """Replaces each `sdg.island` by its body: the body's ops move into the
    graph before it, a read of a block argument becomes a read of the
    island's operand with the island's dependence, and the island's results
    become the yielded values. The reference interpreter evaluates islands
    this way, op by op.

    Before:

        %n = sdg.island %h[t], %x[t] domain [t] : (...) -> !tidal.tensor<[4], f32> {
        ^bb0(%a0: ..., %a1: ...):
          %a = sdg.binary add %a0[t], %a1[t] domain [t] : ...
          %r = sdg.unary tanh %a[t] domain [t] : ...
          sdg.yield %r : ...
        }

    After `sdg-inline-islands`:

        %a = sdg.binary add %h[t], %x[t] domain [t] : ...
        %r = sdg.unary tanh %a[t] domain [t] : ...
    """

    name: ClassVar[str] = "sdg-inline-islands"
    summary: ClassVar[str] = "Put the ops of every sdg.island back into its graph (the inverse of sdg-fuse)"

    def run(self, op: ir.Operation) -> None:
        self.num_inlined = inline_islands(op)


def inline_islands(root: ir.Operation) -> int:
    """Inlines every `sdg.island` under `root`; returns how many there were."""
    islands = ops_named(root, "sdg.island")
    for island in islands:
        block = island.regions[0].blocks[0]
        arg_deps = list(ir.ArrayAttr(island.attributes["deps"]))
        args = {arg: (island.operands[j], arg_deps[j]) for j, arg in enumerate(block.arguments)}
        yielded = []
        for op in list(block.operations):
            op = op.operation
            if op.name == "sdg.yield":
                yielded = list(op.operands)
                continue
            deps = list(ir.ArrayAttr(op.attributes["deps"])) if "deps" in op.attributes else None
            for i, value in enumerate(op.operands):
                if value in args:
                    op.operands[i], dep = args[value]
                    if deps is not None:
                        deps[i] = dep
            if deps is not None:
                op.attributes["deps"] = ir.ArrayAttr.get(deps, context=op.context)
            op.move_before(island)
        for result, value in zip(island.results, yielded):
            result.replace_all_uses_with(value)
        island.erase()
    return len(islands)
