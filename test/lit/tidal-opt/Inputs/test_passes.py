"""Tidal passes for tidal-opt's lit tests, loaded with --load-pass-plugin."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.passes import ModulePass, PassFailure, option, register_pass


def _ops_named(root, name):
    found = []

    def visit(op):
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@dataclass
class FailOnGraph(ModulePass):
    """Fails with PassFailure on the first sdg.graph."""

    name: ClassVar[str] = "test-fail-on-graph"
    summary: ClassVar[str] = "fail on the first sdg.graph"
    message: str = option("graphs are not welcome here", "the error message")

    def run(self, op):
        for graph in _ops_named(op, "sdg.graph"):
            raise PassFailure(self.message, graph)


@dataclass
class EmitErrors(ModulePass):
    """Emits an error on every func.func and carries on."""

    name: ClassVar[str] = "test-emit-errors"
    summary: ClassVar[str] = "emit an error diagnostic on every func.func"

    def run(self, op):
        for func in _ops_named(op, "func.func"):
            func.location.emit_error("functions are suspicious")


@dataclass
class Crash(ModulePass):
    """A pass with a bug."""

    name: ClassVar[str] = "test-crash"
    summary: ClassVar[str] = "raise an unexpected exception"

    def run(self, op):
        return 1 // 0


@dataclass
class RecordOptions(ModulePass):
    """Writes its options into a `test.options` attribute of the module."""

    name: ClassVar[str] = "test-record-options"
    summary: ClassVar[str] = "record the option values on the module"
    count: int = option(1, "an int")
    scale: float = option(0.5, "a float")
    flag: bool = option(False, "a bool")
    label: str = option("none", "a string")
    sizes: list[int] = option([], "a list of ints")
    names: list[str] = option([], "a list of strings")

    def run(self, op):
        text = (f"count={self.count} scale={self.scale} flag={self.flag} label={self.label} "
                f"sizes={self.sizes} names={self.names}")
        op.attributes["test.options"] = ir.StringAttr.get(text)


for cls in (FailOnGraph, EmitErrors, Crash, RecordOptions):
    register_pass(cls, replace=True)
