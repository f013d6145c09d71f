"""`sdg-view-graph`: print every `sdg.graph` as Graphviz DOT (the IR is unchanged).

Like MLIR's `--view-op-graph`, the DOT goes to stderr unless `file` names a
path (`-` is stderr). See `sdg_dot.py` for what the drawing shows.

    tidal-opt g.mlir --sdg-view-graph -o /dev/null 2> g.dot
    tidal-opt g.mlir --pass-pipeline='builtin.module(sdg-view-graph{file=g.dot})'
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.passes.base import ModulePass, PassFailure, option

from .graph import GraphError, graphs_in, read_graph
from .sdg_dot import graph_dot

__all__ = ["SdgViewGraph"]


@dataclass
class SdgViewGraph(ModulePass):
    """Writes the DOT of every sdg.graph; see the module docstring."""

    name: ClassVar[str] = "sdg-view-graph"
    summary: ClassVar[str] = "Print each sdg.graph as Graphviz DOT (to stderr, or to a file)"

    file: str = option("-", "where to write the DOT ('-': stderr)")

    def run(self, op: ir.Operation) -> None:
        texts = []
        for graph_op in graphs_in(op):
            try:
                texts.append(graph_dot(read_graph(graph_op)))
            except GraphError as e:
                raise PassFailure(e.message, e.op or graph_op) from None
        if self.file == "-":
            sys.stderr.write("".join(texts))
            sys.stderr.flush()
            return
        try:
            with open(self.file, "w") as f:
                f.write("".join(texts))
        except OSError as e:
            raise PassFailure(f"sdg-view-graph: cannot write '{self.file}': {e.strerror}", op) from None
